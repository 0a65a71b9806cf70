package ssh

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// pushScript writes its stdin to a temporary file beside the path in $1,
// checks it holds the $2 bytes sent (a local ssh that dies mid-copy ends
// the remote stdin as a complete copy would), makes it executable and
// renames it over that path: a binary already there, running or not, is
// replaced whole, never rewritten in place, and a reader of the path
// finds the old file or the new one, never half of one. With $3 "mkdir"
// the path's folder is made first. A failed copy leaves nothing behind.
// mktemp's name is unique even among hosts that share the folder (an
// NFS home), where two hosts' shells may have one pid: two pushes to one
// path never write into one file, and the last rename wins.
const pushScript = `if [ "$3" = mkdir ]; then mkdir -p "${1%/*}" || exit 1; fi
t=$(mktemp "$1.tmp.XXXXXX") || exit 1
cat > "$t" || { rm -f "$t"; exit 1; }
n=$(($(wc -c < "$t")))
if [ "$n" -ne "$2" ]; then rm -f "$t"; echo "$1: received $n bytes of $2" >&2; exit 1; fi
chmod 755 "$t" || { rm -f "$t"; exit 1; }
mv -f "$t" "$1" || { rm -f "$t"; exit 1; }`

// PushBinary copies the local file localPath to remotePath on host, made
// executable, through ssh (no scp or sftp needed on either side). What
// is at remotePath is replaced atomically, once every byte arrived.
// remotePath is taken by the remote shell as it is: a relative path is
// relative to the login folder, and its folder must exist. The error names
// the host.
func PushBinary(ctx context.Context, host, localPath, remotePath string, opts Options) error {
	return push(ctx, host, localPath, remotePath, "", opts)
}

// PushMkdir is PushBinary that first makes remotePath's folder, with its
// parents. remotePath must be absolute or relative to the login folder.
func PushMkdir(ctx context.Context, host, localPath, remotePath string, opts Options) error {
	return push(ctx, host, localPath, remotePath, "mkdir", opts)
}

func push(ctx context.Context, host, localPath, remotePath, mode string, opts Options) error {
	f, err := os.Open(localPath)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if remotePath == "" {
		return fmt.Errorf("ssh %s: no remote path to push %s to", host, localPath)
	}
	s, err := Start(ctx, host, []string{"sh", "-c", pushScript, "sh", remotePath, strconv.FormatInt(info.Size(), 10), mode}, opts)
	if err != nil {
		return err
	}
	defer s.Close()
	_, copyErr := io.Copy(s.Stdin(), f)
	closeErr := s.Stdin().Close()
	// A failed ssh also fails the copy; its own error says more.
	if err := s.Wait(); err != nil {
		return err
	}
	if err := errors.Join(copyErr, closeErr); err != nil {
		return fmt.Errorf("ssh %s: pushing %s: %w", host, localPath, err)
	}
	return nil
}

// Output runs argv on host with an empty stdin and returns what it wrote
// on stdout once it exits; a failure is Wait's error.
func Output(ctx context.Context, host string, argv []string, opts Options) (string, error) {
	s, err := Start(ctx, host, argv, opts)
	if err != nil {
		return "", err
	}
	defer s.Close()
	s.Stdin().Close()
	out, readErr := io.ReadAll(s.Stdout())
	if err := s.Wait(); err != nil {
		return "", err
	}
	if readErr != nil {
		return "", fmt.Errorf("ssh %s: %w", host, readErr)
	}
	return string(out), nil
}
