package cmdline

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestTakeSetsItsFlagsAndKeepsTheRest(t *testing.T) {
	fl := pflag.NewFlagSet("t", pflag.ContinueOnError)
	hosts := fl.String("hosts", "", "")
	push := fl.Bool("push-binary", false, "")
	skew := fl.Duration("max-clock-skew", 0, "")
	rest, err := Take(fl, []string{"--rw=read", "--hosts", "h1,h2", "job.fio", "-push-binary", "--max-clock-skew=1s", "--name=x", "--bs", "4k"})
	if err != nil {
		t.Fatal(err)
	}
	if *hosts != "h1,h2" || !*push || skew.String() != "1s" {
		t.Errorf("hosts %q, push %v, skew %s", *hosts, *push, skew)
	}
	if want := []string{"--rw=read", "job.fio", "--name=x", "--bs", "4k"}; !slices.Equal(rest, want) {
		t.Errorf("rest %q; want %q", rest, want)
	}

	for _, args := range [][]string{{"--hosts"}, {"--max-clock-skew=soon"}, {"--push-binary=perhaps"}} {
		if _, err := Take(fl, args); err == nil || !strings.Contains(err.Error(), strings.Split(strings.TrimLeft(args[0], "-"), "=")[0]) {
			t.Errorf("%q: %v; want an error naming the flag", args, err)
		}
	}
}
