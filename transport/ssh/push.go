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
// the remote stdin as a complete copy would) and makes it executable.
// Then, with $3 "replace", it renames it over that path, so a binary
// already running there is replaced, never rewritten in place; with $3
// "new", it creates the path's folder first and links the copy to the
// path only if nothing is there (ln fails on an existing name, at once),
// so nothing already there is ever written over. A failed copy leaves
// nothing behind. The temporary name has the shell's pid: two pushes to
// one path do not write into one file.
const pushScript = `t="$1.tmp.$$"
if [ "$3" = new ]; then mkdir -p "${1%/*}" || exit 1; fi
cat > "$t" || { rm -f "$t"; exit 1; }
n=$(($(wc -c < "$t")))
if [ "$n" -ne "$2" ]; then rm -f "$t"; echo "$1: received $n bytes of $2" >&2; exit 1; fi
chmod +x "$t" || { rm -f "$t"; exit 1; }
if [ "$3" = new ]; then ln "$t" "$1"; s=$?; rm -f "$t"; exit $s; fi
mv -f "$t" "$1" || { rm -f "$t"; exit 1; }`

// PushBinary copies the local file localPath to remotePath on host, made
// executable, through ssh (no scp or sftp needed on either side).
// remotePath is taken by the remote shell as it is: a relative path is
// relative to the login folder, and its folder must exist. The error names
// the host.
func PushBinary(ctx context.Context, host, localPath, remotePath string, opts Options) error {
	return push(ctx, host, localPath, remotePath, "replace", opts)
}

// PushNew is PushBinary to a path that nothing holds yet: its folder is
// created, and a path that exists when the copy is complete is left as
// it is, and is the error (ln's words, naming the host). remotePath must
// be absolute or relative to the login folder.
func PushNew(ctx context.Context, host, localPath, remotePath string, opts Options) error {
	return push(ctx, host, localPath, remotePath, "new", opts)
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
