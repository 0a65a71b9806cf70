package cmdline

import (
	"errors"
	"fmt"
	"strings"
)

// Iperf turns an iperf or iperf3 command line (the arguments after
// "iperf") into cephbench's: -s is "net server", -c HOST "net client
// HOST". -p, -t, -P, -R, -l and --bidir are net's own; -d (iperf's dual
// test) is --bidir, -B HOST binds the server (--listen HOST), -1
// (--one-off) is --once, -J (--json) is --format json, and -i 1 is the
// per-second table net prints anyway. Long flags go to net as they are
// (--results DIR, --rtt 0); any other short option is an error naming it.
func Iperf(args []string) ([]string, error) {
	var mode, host string
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(a, "=")
		if !hasValue && len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.ContainsRune("cBpiPtl", rune(a[1])) {
			name, value, hasValue = a[:2], a[2:], true // -p6900
		}
		// next is the option's value, attached or the next argument.
		next := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("iperf option %s needs a value", name)
			}
			i++
			return args[i], nil
		}
		var err error
		switch name {
		case "-s", "--server", "-c", "--client":
			m := map[bool]string{true: "server", false: "client"}[name == "-s" || name == "--server"]
			if mode != "" && mode != m {
				return nil, errors.New("iperf: -s and -c: choose one")
			}
			mode = m
			if m == "client" {
				host, err = next()
			}
		case "-B", "--bind":
			var h string
			h, err = next()
			rest = append(rest, "--listen", h)
		case "-1", "--one-off":
			rest = append(rest, "--once")
		case "-J", "--json":
			rest = append(rest, "--format", "json")
		case "-R", "--reverse", "--bidir":
			rest = append(rest, name)
		case "-d", "--dualtest":
			rest = append(rest, "--bidir")
		case "-i", "--interval":
			var v string
			if v, err = next(); err == nil && v != "1" {
				err = fmt.Errorf("iperf option %s %s: cephbench net reports every second (-i 1)", name, v)
			}
		case "-p", "--port", "-t", "--time", "-P", "--parallel", "-l", "--length":
			var v string
			v, err = next()
			rest = append(rest, name, v)
		default:
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
				return nil, fmt.Errorf("iperf option %q is not supported: cephbench iperf runs cephbench net server (-s) or client (-c HOST), which take -p, -t, -P, -R, -l, -B, -1, -J and --bidir", a)
			}
			rest = append(rest, a) // net's own flags (--results DIR, --rtt 0) go through
		}
		if err != nil {
			return nil, err
		}
	}
	switch {
	case mode == "":
		return nil, errors.New("iperf: give -s (server) or -c HOST (client)")
	case mode == "client":
		return append([]string{"net", "client", host}, rest...), nil
	}
	return append([]string{"net", "server"}, rest...), nil
}
