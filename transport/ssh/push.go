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
// renames it over that path, so a binary already running there is
// replaced, never rewritten in place. A failed copy leaves nothing behind.
// The temporary name has the shell's pid: two pushes to one path do not
// write into one file.
const pushScript = `t="$1.tmp.$$"
cat > "$t" || { rm -f "$t"; exit 1; }
n=$(($(wc -c < "$t")))
if [ "$n" -ne "$2" ]; then rm -f "$t"; echo "$1: received $n bytes of $2" >&2; exit 1; fi
chmod +x "$t" && mv -f "$t" "$1" || { rm -f "$t"; exit 1; }`

// PushBinary copies the local file localPath to remotePath on host, made
// executable, through ssh (no scp or sftp needed on either side).
// remotePath is taken by the remote shell as it is: a relative path is
// relative to the login folder, and its folder must exist. The error names
// the host.
func PushBinary(ctx context.Context, host, localPath, remotePath string, opts Options) error {
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
	s, err := Start(ctx, host, []string{"sh", "-c", pushScript, "sh", remotePath, strconv.FormatInt(info.Size(), 10)}, opts)
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
