// Package document builds the report of a set of results (cephbench
// report): the measurements with their repeats aggregated, the targets side
// by side, and the context of hosts, plans and the cluster, as text,
// markdown, CSV or JSON.
package document

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cephbench/cephbench/aggregate"
	"github.com/cephbench/cephbench/cluster"
	"github.com/cephbench/cephbench/report"
	"github.com/cephbench/cephbench/result"
	"github.com/cephbench/cephbench/spec"
)

// DocumentSchema identifies the JSON form of a Document.
const DocumentSchema = "cephbench.report/v1"

// Document is the report of a set of results: one measurement per step,
// target and op kind with its repeats aggregated, the targets side by side,
// and what a reader needs to trust the figures (hosts, plans, the cluster's
// state, notes, what did not finish).
type Document struct {
	Schema       string            `json:"schema"`
	Title        string            `json:"title"`
	Sources      []Source          `json:"sources"`
	Measurements []aggregate.Group `json:"measurements"`
	SideBySide   *SideBySide       `json:"side_by_side,omitempty"`
	Hosts        []result.Host     `json:"hosts"`
	// ClusterBefore is the cluster's state before the first result that
	// has one, ClusterAfter after the last.
	ClusterBefore *cluster.Snapshot `json:"cluster_before,omitempty"`
	ClusterAfter  *cluster.Snapshot `json:"cluster_after,omitempty"`
	// ClusterDuring says, for each result whose run watched the cluster,
	// whether it was at rest and what unsettled it, prefixed with its
	// step.
	ClusterDuring []string `json:"cluster_during,omitempty"`
	// Notes are the results' notes, each prefixed with its step.
	Notes []string `json:"notes,omitempty"`
	// Incomplete lists what did not finish: interrupted results, and the
	// failed, interrupted or pending steps of a plan.
	Incomplete []string `json:"incomplete,omitempty"`
}

// Source is one folder or file the document was made from.
type Source struct {
	Path     string    `json:"path"`
	Plan     string    `json:"plan,omitempty"`
	Status   string    `json:"status,omitempty"`
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
}

// SideBySide is the measurements of steps that ran on several targets, one
// row per step and op kind, one cell per target.
type SideBySide struct {
	Targets []string  `json:"targets"`
	Rows    []SideRow `json:"rows"`
}

// SideRow is one step and op kind on every target; a cell is nil where
// the step did not run on that target.
type SideRow struct {
	Step  string             `json:"step"`
	Kind  string             `json:"kind"`
	Cells []*aggregate.Group `json:"cells"`
}

// New builds the report of set.
func New(set *aggregate.Set, title string) *Document {
	d := &Document{Schema: DocumentSchema, Title: title, Measurements: set.Groups()}
	d.SideBySide = SideBySideOf(d.Measurements)
	for _, s := range set.Sources {
		src := Source{Path: s.Path}
		if m := s.Manifest; m != nil {
			src.Plan, src.Status, src.Started, src.Finished = m.Plan, m.Status, m.Started, m.Finished
			for _, st := range m.Steps {
				if st.Status != result.StepDone {
					line := st.ID + ": " + st.Status
					if st.Error != "" {
						line += " (" + st.Error + ")"
					}
					d.Incomplete = append(d.Incomplete, line)
				}
			}
		}
		d.Sources = append(d.Sources, src)
	}
	seenHost := map[string]bool{}
	for _, r := range set.Results {
		key := r.Host.Hostname + "|" + r.Host.Kernel + "|" + r.Host.CPUModel
		if !seenHost[key] {
			seenHost[key] = true
			d.Hosts = append(d.Hosts, r.Host)
		}
		if r.Cluster != nil {
			if d.ClusterBefore == nil {
				d.ClusterBefore = r.Cluster.Before
			}
			if r.Cluster.After != nil {
				d.ClusterAfter = r.Cluster.After
			}
			if r.Cluster.During != nil {
				for _, l := range r.Cluster.During.Lines() {
					d.ClusterDuring = append(d.ClusterDuring, stepOf(r)+": "+l)
				}
			}
		}
		for _, n := range r.Notes {
			d.Notes = append(d.Notes, stepOf(r)+": "+n)
		}
		if r.Interrupted {
			d.Incomplete = append(d.Incomplete, stepOf(r)+": interrupted after "+strconv.FormatFloat(r.ElapsedSeconds, 'f', 1, 64)+"s (its figures cover that)")
		}
	}
	return d
}

func stepOf(r *result.Result) string {
	s := r.Plan.Step
	if t := aggregate.TargetOf(r); t != "" {
		s += " @" + t
	}
	if r.Plan.Of > 1 {
		s += fmt.Sprintf(" #%d", r.Plan.Repeat)
	}
	return s
}

// SideBySideOf pairs the measurements of steps that ran on more than one
// target; nil when none did.
func SideBySideOf(groups []aggregate.Group) *SideBySide {
	type key struct{ step, kind string }
	var order []key
	cells := map[key]map[string]*aggregate.Group{}
	var targets []string
	seenTarget := map[string]bool{}
	for i := range groups {
		g := &groups[i]
		k := key{g.Name(), g.Kind}
		if cells[k] == nil {
			cells[k] = map[string]*aggregate.Group{}
			order = append(order, k)
		}
		cells[k][g.Target] = g
	}
	sb := &SideBySide{}
	for _, k := range order {
		if len(cells[k]) < 2 {
			continue
		}
		for i := range groups {
			if t := groups[i].Target; cells[k][t] != nil && !seenTarget[t] {
				seenTarget[t] = true
				targets = append(targets, t)
			}
		}
		sb.Rows = append(sb.Rows, SideRow{Step: k.step, Kind: k.kind})
	}
	if len(sb.Rows) == 0 {
		return nil
	}
	sb.Targets = targets
	for i, row := range sb.Rows {
		k := key{row.Step, row.Kind}
		for _, t := range targets {
			sb.Rows[i].Cells = append(sb.Rows[i].Cells, cells[k][t])
		}
	}
	return sb
}

// measurementHeader is the text and markdown table's columns.
var measurementHeader = []string{"STEP", "TARGET", "OP", "BS", "N", "IOPS", "MIN", "MAX", "STDDEV", "MiB/s", "MIN", "MAX", "STDDEV", "LAT AVG", "P99", "P99 ALL", "CPU%", "UTIL%"}

// repeatHeader are the columns of a repeat's row, under its measurement:
// like report 004's per-run tables, min and max are over the run's seconds.
func measurementRow(g *aggregate.Group) []string {
	name := g.Name()
	for _, r := range g.Results {
		if r.Interrupted {
			name += "*"
			break
		}
	}
	// Across one repeat there is no spread to show.
	spread := func(s aggregate.Stat, format func(float64) string) []string {
		if s.N() < 2 {
			return []string{"-", "-", "-"}
		}
		return []string{format(s.Min), format(s.Max), format(s.Stddev)}
	}
	row := []string{name, g.Target, g.Kind, blockSize(g.BlockSize), strconv.Itoa(g.IOPS.N()), report.IOPS(g.IOPS.Mean)}
	row = append(row, spread(g.IOPS, report.IOPS)...)
	row = append(row, report.MiBps(g.BandwidthBps.Mean))
	row = append(row, spread(g.BandwidthBps, report.MiBps)...)
	return append(row,
		report.Latency(g.LatMeanNs.Mean), report.Latency(g.LatP99Ns.Mean), report.Latency(float64(g.Merged.Percentiles.At(99))),
		percent(g.CPUPercent), percent(g.DiskUtil),
	)
}

// repeatRows are a measurement's repeats: each one's rates with their
// per-second min, max and stddev.
func repeatRows(g *aggregate.Group) [][]string {
	var rows [][]string
	for _, r := range g.Results {
		s := r.Ops[g.Kind]
		util := "-"
		if len(r.Disks) > 0 {
			util = percent(aggregate.StatOf([]float64{busiest(r)}))
		}
		rows = append(rows, []string{
			fmt.Sprintf("  #%d", r.Plan.Repeat), "", "", "", "",
			report.IOPS(s.IOPS.Mean), report.IOPS(s.IOPS.Min), report.IOPS(s.IOPS.Max), report.IOPS(s.IOPS.Stddev),
			report.MiBps(s.BandwidthBps.Mean), report.MiBps(s.BandwidthBps.Min), report.MiBps(s.BandwidthBps.Max), report.MiBps(s.BandwidthBps.Stddev),
			report.Latency(s.Latency.MeanNs), report.Latency(float64(s.Latency.Percentiles.At(99))), "",
			strconv.FormatFloat(r.CPU.Percent, 'f', 1, 64), util,
		})
	}
	return rows
}

func busiest(r *result.Result) float64 {
	u := 0.0
	for _, d := range r.Disks {
		u = max(u, d.Util)
	}
	return u
}

func percent(s aggregate.Stat) string {
	if s.N() == 0 {
		return "-"
	}
	return strconv.FormatFloat(s.Mean, 'f', 1, 64)
}

func blockSize(b int64) string {
	if b == 0 {
		return "-" // ops of several sizes
	}
	return spec.Size(b).String()
}

// sideHeader and sideRow are the side-by-side table's columns: per target
// IOPS, MiB/s and p99.
func (sb *SideBySide) header() []string {
	h := []string{"STEP", "OP"}
	for _, t := range sb.Targets {
		h = append(h, t+" IOPS", t+" MiB/s", t+" P99")
	}
	return h
}

func (sb *SideBySide) row(r SideRow) []string {
	cells := []string{r.Step, r.Kind}
	for _, g := range r.Cells {
		if g == nil {
			cells = append(cells, "-", "-", "-")
			continue
		}
		cells = append(cells, report.IOPS(g.IOPS.Mean), report.MiBps(g.BandwidthBps.Mean), report.Latency(g.LatP99Ns.Mean))
	}
	return cells
}

// Text writes the document as aligned tables; with repeats, each
// measurement's repeats follow it.
func (d *Document) Text(w io.Writer, repeats bool) error {
	fmt.Fprintf(w, "%s\n\n", d.Title)
	d.Table(w, repeats)
	if sb := d.SideBySide; sb != nil {
		fmt.Fprintln(w, "\nSide by side:")
		rows := [][]string{sb.header()}
		for _, r := range sb.Rows {
			rows = append(rows, sb.row(r))
		}
		writeTable(w, rows, 2)
	}
	for _, section := range d.context() {
		fmt.Fprintf(w, "\n%s:\n", section.title)
		for _, line := range section.lines {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	return nil
}

// Table writes the measurements' table and what its columns mean; with
// repeats, each measurement's repeats follow it.
func (d *Document) Table(w io.Writer, repeats bool) {
	rows := [][]string{measurementHeader}
	for i := range d.Measurements {
		g := &d.Measurements[i]
		rows = append(rows, measurementRow(g))
		if repeats {
			rows = append(rows, repeatRows(g)...)
		}
	}
	writeTable(w, rows, 3)
	fmt.Fprintln(w, "\nIOPS and MiB/s: the mean of the repeats (N), with their min, max and stddev; LAT AVG and P99: means of the repeats'; P99 ALL: of every op of every repeat.")
	if d.interrupted() {
		fmt.Fprintln(w, "*: a repeat was interrupted; its figures cover what it measured.")
	}
	if repeats {
		fmt.Fprintln(w, "A repeat's (#) min, max and stddev are over its seconds.")
	}
}

// Aggregates says whether the document has more to show than a row per
// result: repeats, or targets side by side.
func (d *Document) Aggregates() bool {
	if d.SideBySide != nil {
		return true
	}
	for _, g := range d.Measurements {
		if len(g.Results) > 1 {
			return true
		}
	}
	return false
}

func (d *Document) interrupted() bool {
	for _, g := range d.Measurements {
		for _, r := range g.Results {
			if r.Interrupted {
				return true
			}
		}
	}
	return false
}

// writeTable writes rows as columns two spaces apart, indented by two:
// the first left columns aligned left (names), the others right (figures).
func writeTable(w io.Writer, rows [][]string, left int) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			b.WriteString("  ")
			if i < left {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// Markdown writes the document as GitHub-flavoured markdown.
func (d *Document) Markdown(w io.Writer, repeats bool) error {
	fmt.Fprintf(w, "# %s\n\n", mdEscape(d.Title))
	mdRow(w, measurementHeader)
	mdRule(w, len(measurementHeader))
	for i := range d.Measurements {
		g := &d.Measurements[i]
		mdRow(w, measurementRow(g))
		if repeats {
			for _, r := range repeatRows(g) {
				mdRow(w, r)
			}
		}
	}
	fmt.Fprintln(w, "\nIOPS and MiB/s: the mean of the repeats (N), with their min, max and stddev; LAT AVG and P99: means of the repeats'; P99 ALL: of every op of every repeat.")
	if sb := d.SideBySide; sb != nil {
		fmt.Fprint(w, "\n## Side by side\n\n")
		mdRow(w, sb.header())
		mdRule(w, len(sb.header()))
		for _, r := range sb.Rows {
			mdRow(w, sb.row(r))
		}
	}
	for _, section := range d.context() {
		fmt.Fprintf(w, "\n## %s\n\n", section.title)
		for _, line := range section.lines {
			fmt.Fprintf(w, "- %s\n", mdEscape(line))
		}
	}
	return nil
}

func mdRow(w io.Writer, cells []string) {
	esc := make([]string, len(cells))
	for i, c := range cells {
		esc[i] = mdEscape(strings.TrimSpace(c))
	}
	fmt.Fprintf(w, "| %s |\n", strings.Join(esc, " | "))
}

func mdRule(w io.Writer, n int) {
	fmt.Fprintf(w, "|%s\n", strings.Repeat(" --- |", n))
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`).Replace(s)
}

// csvHeader are the CSV columns: raw numbers (ops/s, bytes/s, ns) for
// programs. The row whose repeat is "all" aggregates the repeats (min,
// max and stddev across them); a repeat's row has its per-second min, max
// and stddev.
var csvHeader = []string{"step", "job", "target", "kind", "block_size", "repeat", "n",
	"iops", "iops_min", "iops_max", "iops_stddev", "bw_bytes_per_sec", "bw_min", "bw_max", "bw_stddev",
	"lat_mean_ns", "lat_p50_ns", "lat_p99_ns", "lat_max_ns", "cpu_percent", "disk_util_percent", "errors"}

// CSV writes one row per measurement and one per repeat.
func (d *Document) CSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for i := range d.Measurements {
		g := &d.Measurements[i]
		util := ""
		if g.DiskUtil.N() > 0 {
			util = f(g.DiskUtil.Mean)
		}
		row := []string{g.Step, g.Job, g.Target, g.Kind, strconv.FormatInt(g.BlockSize, 10), "all", strconv.Itoa(g.IOPS.N()),
			f(g.IOPS.Mean), f(g.IOPS.Min), f(g.IOPS.Max), f(g.IOPS.Stddev),
			f(g.BandwidthBps.Mean), f(g.BandwidthBps.Min), f(g.BandwidthBps.Max), f(g.BandwidthBps.Stddev),
			f(g.LatMeanNs.Mean), f(g.LatP50Ns.Mean), f(g.LatP99Ns.Mean), f(g.LatMaxNs.Max), f(g.CPUPercent.Mean), util,
			strconv.FormatInt(g.Errors, 10)}
		if err := cw.Write(row); err != nil {
			return err
		}
		for _, r := range g.Results {
			s := r.Ops[g.Kind]
			util := ""
			if len(r.Disks) > 0 {
				util = f(busiest(r))
			}
			row := []string{g.Step, g.Job, g.Target, g.Kind, strconv.FormatInt(g.BlockSize, 10), strconv.Itoa(r.Plan.Repeat), "1",
				f(s.IOPS.Mean), f(s.IOPS.Min), f(s.IOPS.Max), f(s.IOPS.Stddev),
				f(s.BandwidthBps.Mean), f(s.BandwidthBps.Min), f(s.BandwidthBps.Max), f(s.BandwidthBps.Stddev),
				f(s.Latency.MeanNs), strconv.FormatInt(s.Latency.Percentiles.At(50), 10), strconv.FormatInt(s.Latency.Percentiles.At(99), 10),
				strconv.FormatInt(s.Latency.MaxNs, 10), f(r.CPU.Percent), util, strconv.FormatInt(s.Errors, 10)}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// JSON writes the document as indented JSON.
func (d *Document) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

type section struct {
	title string
	lines []string
}

// context is the document's sections after the tables: sources, hosts,
// the cluster, notes and what did not finish.
func (d *Document) context() []section {
	var out []section
	var src []string
	for _, s := range d.Sources {
		line := s.Path
		if s.Plan != "" {
			line += fmt.Sprintf(": plan %s, %s", s.Plan, s.Status)
			if !s.Started.IsZero() {
				line += ", started " + s.Started.Format("2006-01-02 15:04:05 MST")
			}
			if !s.Finished.IsZero() {
				line += ", took " + s.Finished.Sub(s.Started).Round(time.Second).String()
			}
		}
		src = append(src, line)
	}
	out = append(out, section{"Results", src})
	var hosts []string
	for _, h := range d.Hosts {
		hosts = append(hosts, hostLine(h))
	}
	out = append(out, section{"Client hosts", hosts})
	if d.ClusterBefore != nil {
		out = append(out, section{"Cluster before", snapshotLines(d.ClusterBefore)})
	}
	if d.ClusterAfter != nil {
		out = append(out, section{"Cluster after", snapshotLines(d.ClusterAfter)})
	}
	if len(d.ClusterDuring) > 0 {
		out = append(out, section{"Cluster during the runs", d.ClusterDuring})
	}
	if len(d.Notes) > 0 {
		out = append(out, section{"Notes", d.Notes})
	}
	if len(d.Incomplete) > 0 {
		out = append(out, section{"Did not finish", d.Incomplete})
	}
	return out
}

// hostLine says what is known of a host, leaving out what is not.
func hostLine(h result.Host) string {
	var facts []string
	if h.OS != "" {
		facts = append(facts, h.OS+"/"+h.Arch)
	}
	if h.Kernel != "" {
		facts = append(facts, "kernel "+h.Kernel)
	}
	if h.CPUs > 0 {
		cpus := fmt.Sprintf("%d CPUs", h.CPUs)
		if h.CPUModel != "" {
			cpus += " (" + h.CPUModel + ")"
		}
		facts = append(facts, cpus)
	}
	if h.MemoryBytes > 0 {
		facts = append(facts, cluster.Bytes(h.MemoryBytes)+" memory")
	}
	return h.Hostname + ": " + strings.Join(facts, ", ")
}

func snapshotLines(s *cluster.Snapshot) []string {
	health := s.Health.Status
	var checks []string
	for name, msg := range s.Health.Checks {
		checks = append(checks, name+": "+msg)
	}
	sort.Strings(checks)
	if len(checks) > 0 {
		health += " (" + strings.Join(checks, "; ") + ")"
	}
	var pgs []string
	for state, n := range s.PGStates {
		pgs = append(pgs, fmt.Sprintf("%d %s", n, state))
	}
	sort.Strings(pgs)
	lines := []string{
		"health " + health + ", taken " + s.Taken.Format("2006-01-02 15:04:05 MST"),
		fmt.Sprintf("%d mons, %d mgrs, %d MDS; OSDs %d up, %d in, of %d", s.Mons, s.Mgrs, s.MDS, s.OSDs.Up, s.OSDs.In, s.OSDs.Total),
		fmt.Sprintf("raw %s used of %s (%s available); PGs %s", cluster.Bytes(s.Usage.UsedBytes), cluster.Bytes(s.Usage.TotalBytes), cluster.Bytes(s.Usage.AvailBytes), strings.Join(pgs, ", ")),
	}
	for _, p := range s.Pools {
		line := fmt.Sprintf("pool %s: %s size %d/%d, %d PGs, %s stored in %d objects", p.Name, p.Type, p.Size, p.MinSize, p.PGNum,
			cluster.Bytes(p.StoredBytes), p.Objects)
		if len(p.Applications) > 0 {
			line += " (" + strings.Join(p.Applications, ", ") + ")"
		}
		if p.Flags != "" {
			line += ", flags " + p.Flags
		}
		lines = append(lines, line)
	}
	var versions []string
	for daemon, v := range s.Versions {
		versions = append(versions, daemon+" "+v)
	}
	sort.Strings(versions)
	if len(versions) > 0 {
		lines = append(lines, "versions: "+strings.Join(versions, ", "))
	}
	return lines
}
