package multihost

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/transport/ssh"
)

// probeScript prints, one a line: the path of this version's copy in the
// host's cache folder ($1 the version), the first line the program $2
// says for --version (empty when it is missing), and "present" with the
// copy's own --version line, or "absent". Neither program gets any input.
const probeScript = `c="${XDG_CACHE_HOME:-$HOME/.cache}/cephbench/$1/cephbench"
printf '%s\n' "$c"
printf '%s\n' "$("$2" --version </dev/null 2>/dev/null | head -n 1)"
if [ -e "$c" ]; then printf 'present %s\n' "$("$c" --version </dev/null 2>/dev/null | head -n 1)"; else echo absent; fi`

// versionLine is what this cephbench says for --version.
func versionLine() string { return "cephbench version " + result.Version }

var unsafeVersion = regexp.MustCompile(`[^A-Za-z0-9._+-]+`)

// Program is the cephbench program to run on host: remote when it is
// this version; otherwise this version's copy in the host's cache folder
// (${XDG_CACHE_HOME:-~/.cache}/cephbench/VERSION/cephbench), which is
// made from local, this binary, when it is not there yet. A file at that
// path that is not this version is never written over: it is the error.
// The copy must run on the host (the same operating system and
// processor), which is checked once it is there. Errors name the host.
func Program(ctx context.Context, host, remote, local string, opts ssh.Options) (string, error) {
	version := unsafeVersion.ReplaceAllString(result.Version, "-")
	out, err := ssh.Output(ctx, host, []string{"sh", "-c", probeScript, "sh", version, remote}, opts)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || lines[0] == "" {
		return "", fmt.Errorf("host %s: probing its cephbench: unexpected answer %q", host, out)
	}
	cached, remoteSays, state := lines[0], lines[1], lines[2]
	switch {
	case remoteSays == versionLine():
		return remote, nil
	case state == "present "+versionLine():
		return cached, nil
	case state != "absent":
		return "", fmt.Errorf("host %s: %s is there and is not this cephbench (%s): not written over", host, cached, strings.TrimPrefix(state, "present "))
	}
	if err := ssh.PushNew(ctx, host, local, cached, opts); err != nil {
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
