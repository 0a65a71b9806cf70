package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/engine"
	"github.com/cephbench/cephbench/engine/writeahead"
	"github.com/cephbench/cephbench/spec"
)

func newCleanupCmd(env Env) *cobra.Command {
	var rf recordFlags
	cmd := &cobra.Command{
		Use:   "cleanup TARGET [--force | --older-than AGE]",
		Short: "Remove what cephbench created and kept (--keep) on a target, and nothing else",
		Long: `Remove the objects, images, files and buckets that cephbench created on
TARGET and left in place with --keep (or that a killed run left): a
dirobj:// directory's objects, a rados:// pool's benchmark objects, an
rbd://POOL/IMAGE image cephbench created, a cephfs:// directory's files, an
s3:// bucket's objects (and the bucket if cephbench made it). Anything
cephbench did not create stays.

A run still writing to TARGET is left alone: a write record of a process of
this host that still runs is skipped and named. A record of another host
(or of a cephbench before 2026-12, which recorded no process) cannot be
checked: it is skipped unless --force, or --older-than AGE and the record
was written longer ago than AGE.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			j, err := rf.judge(cmd)
			if err != nil {
				return err
			}
			t, err := env.target(args[0])
			if err != nil {
				return err
			}
			err = engine.CleanKept(cmd.Context(), t, j)
			printSkipped(env.Stdout, j)
			if err != nil {
				if engine.IsUsage(err) {
					return usageErr(err)
				}
				return failuref("%s: %w", args[0], err)
			}
			fmt.Fprintf(env.Stdout, "cleaned up %s\n", t)
			return nil
		},
	}
	rf.register(cmd)
	return cmd
}

// recordFlags are what every cleanup command is told about write records
// this host cannot check: another host's, or an old cephbench's.
type recordFlags struct {
	force     bool
	olderThan spec.Duration
}

func (f *recordFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.force, "force", false, "remove what the write records of other hosts' runs name, without knowing whether they still run")
	fl.Var(&f.olderThan, "older-than", "remove what another host's write records name once written longer ago than this (e.g. 1h)")
}

// judge returns the Judge the flags ask for; a zero --older-than, or one
// given with --force, is a usage error.
func (f *recordFlags) judge(cmd *cobra.Command) (*writeahead.Judge, error) {
	if cmd.Flags().Changed("older-than") {
		switch {
		case f.olderThan <= 0:
			return nil, usagef("--older-than must be more than 0 (--force takes every record as a dead run's)")
		case f.force:
			return nil, usagef("--older-than and --force exclude each other: --force takes every record as a dead run's")
		}
	}
	return writeahead.NewJudge(f.force, time.Duration(f.olderThan)), nil
}

// printSkipped prints a line for each record j skipped.
func printSkipped(w io.Writer, j *writeahead.Judge) {
	for _, line := range j.Skipped() {
		fmt.Fprintln(w, line)
	}
}
