package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/internal/io/atomicfile"
	"github.com/cephbench/cephbench/report/document"
	"github.com/cephbench/cephbench/report/htmlreport"
)

func newReportCmd(env Env) *cobra.Command {
	var (
		format  string
		out     string
		repeats bool
	)
	cmd := &cobra.Command{
		Use:   "report RESULTS_DIR|RESULT.json ... [--format text|markdown|csv|json|html] [-o FILE]",
		Short: "Report results: one row per measurement with its repeats aggregated, targets side by side",
		Long: `Report the results of plan runs (results folders) or of single commands
(result files): one row per step, target and op kind, with the repeats
aggregated (IOPS and MiB/s mean, min, max and stddev across repeats;
latency mean and p99; the p99 of every op of every repeat, from the merged
histograms; CPU; disk utilisation where known); the steps that ran on
several targets side by side; then the client hosts, the plans, the
cluster's state before and after, notes, and what did not finish.

Formats: text, markdown, csv (raw numbers, one row per measurement and
one per repeat), json (schema cephbench.report/v1), html (one
self-contained page with charts, no network needed to view it).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			out = env.path(out)
			for i := range args {
				args[i] = env.path(args[i])
			}
			if !cmd.Flags().Changed("format") && out != "" {
				// The file's extension says what it is.
				switch strings.ToLower(filepath.Ext(out)) {
				case ".md", ".markdown":
					format = "markdown"
				case ".csv":
					format = "csv"
				case ".json":
					format = "json"
				case ".html", ".htm":
					format = "html"
				}
			}
			switch format {
			case "text", "markdown", "md", "csv", "json", "html":
			default:
				return usagef("invalid --format %q (want text, markdown, csv, json or html)", format)
			}
			if len(args) == 0 {
				return usagef("give one or more results folders or result files")
			}
			if out != "" {
				if fi, err := os.Stat(filepath.Dir(out)); err != nil || !fi.IsDir() {
					return usagef("-o %s: no such directory %s", out, filepath.Dir(out))
				}
			}
			set, err := aggregate.Load(args...)
			if err != nil {
				return usageErr(err)
			}
			title := "cephbench report"
			if len(set.Sources) == 1 {
				if m := set.Sources[0].Manifest; m != nil {
					title = fmt.Sprintf("cephbench report: plan %s (%s)", m.Plan, set.Sources[0].Path)
				}
			}
			var b bytes.Buffer
			d := document.New(set, title)
			switch format {
			case "text":
				err = d.Text(&b, repeats)
			case "markdown", "md":
				err = d.Markdown(&b, repeats)
			case "csv":
				err = d.CSV(&b)
			case "json":
				err = d.JSON(&b)
			case "html":
				err = htmlreport.Write(&b, set, title)
			}
			if err != nil {
				return err
			}
			if out == "" {
				_, err = io.Copy(env.Stdout, &b)
				return err
			}
			if err := atomicfile.Write(out, b.Bytes()); err != nil {
				return err
			}
			fmt.Fprintf(env.Stderr, "report written to %s\n", out)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "text", "text, markdown, csv, json or html")
	fl.StringVarP(&out, "output", "o", "", "write the report to this file instead of stdout (.md, .csv, .json or .html choose the format)")
	fl.BoolVar(&repeats, "repeats", false, "also a row for each repeat (text and markdown; csv always has them)")
	return cmd
}
