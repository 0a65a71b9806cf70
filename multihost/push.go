package multihost

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/transport/ssh"
)

// probeScript prints, one a line: the path of this version's copy in the
// host's cache folder ($1 the version), the first line the program $2
// says for --version (empty when it is missing), and "present" with the
// copy's SHA-256 (none when sha256sum is missing or fails), or "absent".
// The program gets no input.
const probeScript = `c="${XDG_CACHE_HOME:-$HOME/.cache}/cephbench/$1/cephbench"
printf '%s\n' "$c"
printf '%s\n' "$("$2" --version </dev/null 2>/dev/null | head -n 1)"
if [ -e "$c" ]; then printf 'present %s\n' "$(sha256sum < "$c" 2>/dev/null | cut -d ' ' -f 1)"; else echo absent; fi`

// versionLine is what this cephbench says for --version.
func versionLine() string { return "cephbench version " + result.Version }

var unsafeVersion = regexp.MustCompile(`[^A-Za-z0-9._+-]+`)

// Program is the cephbench program to run on host: remote when it is
// this version; otherwise this version's copy in the host's cache folder
// (${XDG_CACHE_HOME:-~/.cache}/cephbench/VERSION/cephbench). A copy
// there with local's checksum, sum (local is this binary; fileSum), is
// used as it is;
// any other file there, or none, is replaced by a copy of local, renamed
// into place whole (ssh.PushMkdir). Hosts that share a home directory
// share that copy: two of them copying at once both succeed, and each
// runs a whole copy of local. The copy must run on the host (the same
// operating system and processor), which is checked once it is there.
// Errors name the host.
func Program(ctx context.Context, host, remote, local, sum string, opts ssh.Options) (string, error) {
	version := unsafeVersion.ReplaceAllString(result.Version, "-")
	out, err := ssh.Output(ctx, host, []string{"sh", "-c", probeScript, "sh", version, remote}, opts)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || lines[0] == "" {
		return "", fmt.Errorf("host %s: probing its cephbench: unexpected answer %q", host, out)
	}
	cached := lines[0]
	program, push := choose(remote, cached, lines[1], lines[2], sum)
	if !push {
		return program, nil
	}
	if err := ssh.PushMkdir(ctx, host, local, cached, opts); err != nil {
		return "", err
	}
	says, err := ssh.Output(ctx, host, []string{cached, "--version"}, opts)
	if err != nil {
		return "", fmt.Errorf("host %s: the cephbench copied to %s does not run there: %w", host, cached, err)
	}
	if strings.TrimSpace(says) != versionLine() {
		return "", fmt.Errorf("host %s: the cephbench copied to %s says %q", host, cached, strings.TrimSpace(says))
	}
	return cached, nil
}

// choose is Program's decision from the probe's answer (remoteSays, the
// remote program's --version line, and state, the cached copy's) and
// local's SHA-256: the program to run, or push when the cached copy is
// to be replaced by local first. Only the checksum makes a cached copy
// this binary: another build may say the same version.
func choose(remote, cached, remoteSays, state, sum string) (program string, push bool) {
	switch {
	case remoteSays == versionLine():
		return remote, false
	case state == "present "+sum:
		return cached, false
	}
	return cached, true
}

// fileSum is the SHA-256 of the file at path, in hex, as sha256sum
// prints it.
func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
