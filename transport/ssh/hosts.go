package ssh

import (
	"os"
	"strings"

	"github.com/cephbench/cephbench/engine"
)

// Hosts returns the hosts a command line names: list is --hosts (names
// separated by commas), file is --hostfile (one name a line; '#' begins a
// comment; blank lines are skipped). Neither given (both empty): nil.
// Each name is what ssh takes as a destination (a host, an alias of the
// user's ssh config, user@host). Every problem is a one-line
// *engine.UsageError: both flags, an empty or malformed name, a name given
// twice (ignoring case, as host names do), an unreadable or empty file.
// Reading file is the only I/O.
func Hosts(list, file string) ([]string, error) {
	switch {
	case list != "" && file != "":
		return nil, engine.Usagef("--hosts and --hostfile: give one of them")
	case list != "":
		return listHosts(list)
	case file != "":
		return fileHosts(file)
	}
	return nil, nil
}

func listHosts(list string) ([]string, error) {
	var hosts []string
	seen := map[string]bool{}
	for _, h := range strings.Split(list, ",") {
		h = strings.TrimSpace(h)
		if err := checkHost(h); err != nil {
			return nil, engine.Usagef("--hosts %q: %v", list, err)
		}
		if seen[strings.ToLower(h)] {
			return nil, engine.Usagef("--hosts %q: %s is named twice", list, h)
		}
		seen[strings.ToLower(h)] = true
		hosts = append(hosts, h)
	}
	return hosts, nil
}

func fileHosts(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, engine.Usagef("--hostfile: %v", err)
	}
	var hosts []string
	lineOf := map[string]int{}
	for i, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		h := strings.TrimSpace(line)
		if h == "" {
			continue
		}
		if err := checkHost(h); err != nil {
			return nil, engine.Usagef("--hostfile %s line %d: %v", file, i+1, err)
		}
		if first, ok := lineOf[strings.ToLower(h)]; ok {
			return nil, engine.Usagef("--hostfile %s line %d: %s is already on line %d", file, i+1, h, first)
		}
		lineOf[strings.ToLower(h)] = i + 1
		hosts = append(hosts, h)
	}
	if len(hosts) == 0 {
		return nil, engine.Usagef("--hostfile %s names no host", file)
	}
	return hosts, nil
}
