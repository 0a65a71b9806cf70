package cmdline

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
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

// Ceph's tools' users type long flags with one dash; shorthands, values
// and what follows "--" are left alone.
func TestOneDashLongFlags(t *testing.T) {
	long := func(n string) bool { return n == "no-cleanup" || n == "run-name" || n == "p" }
	got := OneDash([]string{"-p", "rbd", "bench", "30", "seq", "-no-cleanup", "-run-name=x", "-run-name", "y", "-nope", "--no-cleanup", "-", "--", "-no-cleanup"}, long)
	want := []string{"-p", "rbd", "bench", "30", "seq", "--no-cleanup", "--run-name=x", "--run-name", "y", "-nope", "--no-cleanup", "-", "--", "-no-cleanup"}
	if !slices.Equal(got, want) {
		t.Errorf("%q\nwant %q", got, want)
	}
}

// Only the marked command's flags are taken with one dash.
func TestOneDashForMarkedCommands(t *testing.T) {
	root := &cobra.Command{Use: "cephbench"}
	rados := &cobra.Command{Use: "rados", Annotations: map[string]string{OneDashAnnotation: ""}}
	rados.PersistentFlags().StringP("pool", "p", "", "")
	bench := &cobra.Command{Use: "bench", Run: func(*cobra.Command, []string) {}}
	bench.Flags().Bool("no-cleanup", false, "")
	other := &cobra.Command{Use: "other", Run: func(*cobra.Command, []string) {}}
	other.Flags().Bool("no-cleanup", false, "")
	rados.AddCommand(bench)
	root.AddCommand(rados, other)
	got := OneDashFor(root, []string{"rados", "-p", "rbd", "bench", "30", "seq", "-no-cleanup", "-pool=x"})
	if want := []string{"rados", "-p", "rbd", "bench", "30", "seq", "--no-cleanup", "--pool=x"}; !slices.Equal(got, want) {
		t.Errorf("%q; want %q", got, want)
	}
	if got := OneDashFor(root, []string{"other", "-no-cleanup"}); got[1] != "-no-cleanup" {
		t.Errorf("an unmarked command's flag was rewritten: %q", got)
	}
}
