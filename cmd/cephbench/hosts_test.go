package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/cephbench/cephbench/agent"
	"github.com/cephbench/cephbench/internal/mergetest"
	"github.com/cephbench/cephbench/internal/sshtest"
	"github.com/cephbench/cephbench/metrics"
	"github.com/cephbench/cephbench/result"
)

// onHosts runs the coordinator with args on hosts through the fleet's
// ssh_config, the agents being the binary remote, and returns its exit
// code and output.
func onHosts(t *testing.T, bin, remote string, fleet *sshtest.Fleet, hosts []string, args ...string) (int, string) {
	t.Helper()
	args = append(args, "--hosts", strings.Join(hosts, ","), "--ssh-config", fleet.ConfigFile, "--remote-cephbench", remote)
	cmd := exec.Command(bin, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	return exitCode(t, cmd.Run()), out.String()
}

// exitCode is the exit code of a command that ran with err: a command
// that could not run fails the test.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

// wantMergedExactly checks a merged result against its hosts' own: ops
// added, and p50, p99 and p99.9 those of the hosts' histograms added.
func wantMergedExactly(t *testing.T, path string, hosts int, kind string) {
	t.Helper()
	m, err := result.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Hosts) != hosts {
		t.Fatalf("the merged result holds %d hosts' results; want %d", len(m.Hosts), hosts)
	}
	mergetest.AddsUp(t, m, kind)
	if len(m.Series) == 0 {
		t.Error("the merged result has no seconds")
	}
}

// Four hosts behind real sshd, reached with the operator's kind of ssh
// setup (a config, a key, known_hosts): a null and a file run each merge
// into one exact result, and the file run leaves nothing on any host.
func TestFourHostsOverSSH(t *testing.T) {
	fleet := sshtest.Start(t, 4)
	dir, bin := build(t)
	hosts := fleet.Aliases()

	out := filepath.Join(dir, "null.json")
	code, text := onHosts(t, bin, bin, fleet, hosts, "bench", "--target", "null://", "--iodepth", "16", "--duration", "2s", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, text)
	}
	wantMergedExactly(t, out, 4, "read")

	data := t.TempDir()
	out = filepath.Join(dir, "file.json")
	code, text = onHosts(t, bin, bin, fleet, hosts, "bench", "--target", data, "--rw", "randrw", "--size", "4M", "--duration", "2s", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, text)
	}
	wantMergedExactly(t, out, 4, "write")
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Errorf("the hosts left %d files in the shared directory", len(entries))
	}
}

// A host whose key is not known, or whose cephbench is another version,
// is refused in one line naming it, and nothing runs.
func TestHostsRefusedOverSSH(t *testing.T) {
	fleet := sshtest.Start(t, 2)
	dir, bin := build(t)
	unknown := fleet.AddUnknown(t)

	code, text := onHosts(t, bin, bin, fleet, []string{"host1", unknown.Alias}, "bench", "--target", "null://", "--duration", "1s", "--results", dir)
	if code == 0 || !strings.Contains(text, unknown.Alias) || !strings.Contains(text, "Host key verification failed") || strings.Count(strings.TrimSpace(text), "\n") > 0 {
		t.Errorf("an unknown host key: exit %d\n%s", code, text)
	}

	old := filepath.Join(dir, "cephbench-old")
	if b, err := exec.Command("go", "build", "-ldflags", "-X github.com/cephbench/cephbench/result.Version=0.0.1-old", "-o", old, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, b)
	}
	code, text = onHosts(t, bin, old, fleet, []string{"host1", "host2"}, "bench", "--target", "null://", "--duration", "1s", "--results", dir)
	if code != 2 || !strings.Contains(text, "host host1") || !strings.Contains(text, "0.0.1-old") {
		t.Errorf("an older cephbench on the hosts: exit %d\n%s", code, text)
	}
	code, text = onHosts(t, bin, bin, fleet, []string{"host1", "host2"}, "bench", "--target", "null://", "--duration", "1s", "--results", dir, "--on-host-failure", "ignore")
	if code != 2 || !strings.Contains(text, "--on-host-failure") || strings.Count(strings.TrimSpace(text), "\n") > 0 {
		t.Errorf("--on-host-failure ignore: exit %d\n%s", code, text)
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, "*.json")); len(entries) != 0 {
		t.Errorf("a refused run saved %v", entries)
	}
}

// A host whose clock is 300 ms ahead is refused in one line naming it and
// its offset; allowed a second of skew, the run goes on and the result
// reports every host's offset, the skewed one's near 300 ms.
func TestASkewedClockIsRefusedAndReportedOverSSH(t *testing.T) {
	fleet := sshtest.Start(t, 4)
	dir, bin := build(t)
	skewed := fleet.Hosts[2]
	// One program for every host, as --remote-cephbench is: the host
	// reached at the skewed one's address runs its agent 300 ms ahead.
	remote := filepath.Join(dir, "cephbench-skewed")
	script := "#!/bin/sh\ncase \"$SSH_CONNECTION\" in\n*' " + skewed.Addr + " " + strconv.Itoa(skewed.Port) + "') exec " + bin + " \"$@\" --clock-offset 300ms ;;\nesac\nexec " + bin + " \"$@\"\n"
	if err := os.WriteFile(remote, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	code, text := onHosts(t, bin, remote, fleet, fleet.Aliases(), "bench", "--target", "null://", "--duration", "1s", "--results", dir)
	if code != 2 || !strings.Contains(text, "host "+skewed.Alias) || !strings.Contains(text, "clock") || strings.Count(strings.TrimSpace(text), "\n") > 0 {
		t.Fatalf("a host 300 ms ahead: exit %d\n%s", code, text)
	}
	if !strings.Contains(text, "300ms") && !strings.Contains(text, "299ms") && !strings.Contains(text, "301ms") {
		t.Errorf("the refusal does not say how far off the clock is:\n%s", text)
	}

	out := filepath.Join(dir, "skewed.json")
	code, text = onHosts(t, bin, remote, fleet, fleet.Aliases(), "bench", "--target", "null://", "--duration", "1s", "--max-clock-skew", "1s", "-o", out)
	if code != 0 {
		t.Fatalf("allowed a second of skew: exit %d\n%s", code, text)
	}
	m, err := result.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range m.Hosts { // in the order of --hosts
		want := 0.0
		if i == 2 {
			want = 300
		}
		if h.ClockOffset == nil || math.Abs(h.ClockOffset.OffsetMs-want) > 25 {
			t.Errorf("host %d's recorded clock offset %+v; want about %g ms", i+1, h.ClockOffset, want)
		}
	}
	if !strings.Contains(text, "the hosts' clocks, from this host's: ") {
		t.Errorf("the summary does not report the hosts' clocks:\n%s", text)
	}
}

// coordinate runs the coordinator with args on the fleet's hosts and
// returns its exit code, stdout and stderr apart.
func coordinate(t *testing.T, bin string, fleet *sshtest.Fleet, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	args = append(args, "--hosts", strings.Join(fleet.Aliases(), ","), "--ssh-config", fleet.ConfigFile, "--remote-cephbench", bin)
	cmd := exec.Command(bin, args...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	return exitCode(t, cmd.Run()), o.String(), e.String()
}

// fio's command line on three hosts, each in its own files of one
// directory: fio's JSON on stdout is the merged job, whose ops are the
// hosts' added and whose p99 is that of their histograms added, and the
// merged result saved beside it is exact too.
func TestFioOnHostsOverSSH(t *testing.T) {
	fleet := sshtest.Start(t, 3)
	dir, bin := build(t)
	data := t.TempDir()
	code, stdout, stderr := coordinate(t, bin, fleet, "fio", "--name=w", "--directory="+data, "--rw=randwrite", "--bs=4k", "--size=1M",
		"--runtime=2", "--time_based", "--output-format=json", "--results", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	saved, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(saved) != 1 {
		t.Fatalf("saved %v; want the one merged result", saved)
	}
	wantMergedExactly(t, saved[0], 3, "write")
	m, err := result.Load(saved[0])
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Jobs []struct {
			Jobname string
			Write   struct {
				TotalIOs int64 `json:"total_ios"`
				ClatNs   struct {
					Percentile map[string]int64
				} `json:"clat_ns"`
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || len(out.Jobs) != 1 {
		t.Fatalf("fio's JSON: %v, %d jobs\n%s", err, len(out.Jobs), stdout)
	}
	var sum int64
	added := metrics.NewHistogram()
	for _, h := range m.Hosts {
		sum += h.Ops["write"].Ops
		hh, err := hdr.Decode([]byte(h.Histograms["write"]))
		if err != nil {
			t.Fatal(err)
		}
		added.Merge(hh)
	}
	w := out.Jobs[0].Write
	if w.TotalIOs != sum {
		t.Errorf("fio's JSON: %d writes; the hosts made %d", w.TotalIOs, sum)
	}
	if got, want := w.ClatNs.Percentile["99.000000"], added.ValueAtQuantile(99); got != want {
		t.Errorf("fio's JSON: p99 %d ns; the hosts' histograms added give %d", got, want)
	}
	if !strings.HasPrefix(stderr, "fio on 3 hosts") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Errorf("the hosts left %d files in the shared directory", len(entries))
	}
}

// With --per-host, each second of the table has a row per host beneath
// it, whose IOPS and MB/s add up to the merged row's, and the summary a
// line per host, whose ops add up to the merged ops.
func TestPerHostRowsAddUpToTheMergedRow(t *testing.T) {
	fleet := sshtest.Start(t, 2)
	dir, bin := build(t)
	code, stdout, stderr := coordinate(t, bin, fleet, "bench", "--target", "null://", "--duration", "3s", "--per-host", "--results", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	lines := strings.Split(stdout, "\n")
	seconds := 0
	for i, line := range lines {
		f := strings.Fields(line)
		if len(f) != 9 || f[0] == "sec" {
			continue
		}
		seconds++
		var mbps, iops float64
		for k, host := range fleet.Aliases() {
			var hostMBps, hostIOPS, p99 float64
			if _, err := fmt.Sscanf(lines[i+1+k], "      "+host+": cur MB/s %g, cur IOPS %g, p99 lat(s) %g", &hostMBps, &hostIOPS, &p99); err != nil {
				t.Fatalf("second %s: row %d beneath is %q; want %s's: %v", f[0], k+1, lines[i+1+k], host, err)
			}
			mbps += hostMBps
			iops += hostIOPS
		}
		if merged := number(t, f[5]); math.Abs(mbps-merged) > 1e-4*merged {
			t.Errorf("second %s: the hosts' MB/s add up to %g; the merged row's %g", f[0], mbps, merged)
		}
		if merged := number(t, f[6]); math.Abs(iops-merged) > 2 {
			t.Errorf("second %s: the hosts' IOPS add up to %g; the merged row's %g", f[0], iops, merged)
		}
	}
	if seconds < 2 {
		t.Errorf("%d seconds in the table\n%s", seconds, stdout)
	}
	var merged, hosts int64
	for _, line := range lines {
		var n int64
		if _, err := fmt.Sscanf(line, "  read  %d ops", &n); err == nil {
			merged = n
		}
		for _, host := range fleet.Aliases() {
			if _, err := fmt.Sscanf(line, "  "+host+": read %d ops", &n); err == nil {
				hosts += n
			}
		}
	}
	if merged == 0 || hosts != merged {
		t.Errorf("the summary's host lines add up to %d ops; the merged line says %d\n%s", hosts, merged, stdout)
	}
}

func number(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A plan run with --hosts runs each of its steps on every host, and saves
// each step's merged result in the step's folder, as a plan does.
func TestPlanOnHostsOverSSH(t *testing.T) {
	fleet := sshtest.Start(t, 2)
	dir, bin := build(t)
	data := t.TempDir()
	plan := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(plan, []byte(`name: two
steps:
  - name: writes
    run: bench --target `+data+` --rw randwrite --size 1M --duration 1s
  - name: reads
    run: bench --target null:// --duration 1s
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "results")
	code, stdout, stderr := coordinate(t, bin, fleet, "run", plan, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	m, err := result.LoadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Steps) != 2 {
		t.Fatalf("%d steps in the manifest", len(m.Steps))
	}
	for i, kind := range []string{"write", "read"} {
		st := m.Steps[i]
		if st.Status != result.StepDone || len(st.Results) != 1 {
			t.Fatalf("step %s: %s, results %v", st.ID, st.Status, st.Results)
		}
		wantMergedExactly(t, filepath.Join(out, st.Results[0]), 2, kind)
		log, _ := os.ReadFile(filepath.Join(out, st.Log))
		if !strings.Contains(string(log), "bench on 2 hosts, each running it in full: host1, host2") {
			t.Errorf("step %s's log:\n%s", st.ID, log)
		}
	}
	if entries, _ := os.ReadDir(data); len(entries) != 0 {
		t.Errorf("the hosts left %d files in the shared directory", len(entries))
	}
}

// A host whose cephbench is missing, or is another version (a program
// that says another version's hello), is refused in one line naming it
// and suggesting --push-binary; with --push-binary this binary is copied
// to the host's cache once, under its version, and runs there; a file at
// that path that is not this cephbench (another checksum) is replaced.
func TestPushBinaryOverSSH(t *testing.T) {
	fleet := sshtest.Start(t, 2)
	dir, bin := build(t)
	hello := filepath.Join(dir, "other-cephbench")
	var line strings.Builder
	agent.NewEncoder(&line).Encode(&agent.Hello{Version: "0.0.9-other", Protocol: agent.Protocol, Histogram: metrics.StandardHistogram(), Host: "other"})
	if err := os.WriteFile(hello, []byte("#!/bin/sh\nprintf '%s\\n' '"+strings.TrimSpace(line.String())+"'\ncat >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	hosts := fleet.Aliases()
	run := func(remote string, more ...string) (int, string) {
		return onHosts(t, bin, remote, fleet, hosts, append([]string{"bench", "--target", "null://", "--duration", "1s", "--results", dir}, more...)...)
	}
	for _, remote := range []string{filepath.Join(dir, "missing"), hello} {
		code, text := run(remote)
		if code == 0 || !strings.Contains(text, "host1") || !strings.Contains(text, "--push-binary") || strings.Count(strings.TrimSpace(text), "\n") > 0 {
			t.Errorf("%s on the hosts: exit %d; want one line naming the host and --push-binary\n%s", filepath.Base(remote), code, text)
		}
	}

	copies := make([]string, len(fleet.Hosts))
	for i, h := range fleet.Hosts {
		copies[i] = filepath.Join(h.CacheDir, "cephbench", result.Version, "cephbench")
	}
	code, text := run(filepath.Join(dir, "missing"), "--push-binary")
	if code != 0 || !strings.Contains(text, "bench on 2 hosts") {
		t.Fatalf("missing on the hosts, --push-binary: exit %d\n%s", code, text)
	}
	var first []time.Time
	for _, c := range copies {
		st, err := os.Stat(c)
		if err != nil || st.Mode().Perm()&0o111 == 0 {
			t.Fatalf("the copy on the host: %v", err)
		}
		first = append(first, st.ModTime())
	}
	if code, text := run(hello, "--push-binary"); code != 0 {
		t.Fatalf("another version on the hosts, --push-binary: exit %d\n%s", code, text)
	}
	for i, c := range copies {
		if st, err := os.Stat(c); err != nil || !st.ModTime().Equal(first[i]) {
			t.Errorf("the copy already there was copied again: %v", err)
		}
	}

	// Renamed over it: the last run's agent may still be exiting.
	if err := os.WriteFile(copies[1]+".other", []byte("#!/bin/sh\necho someone else\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(copies[1]+".other", copies[1]); err != nil {
		t.Fatal(err)
	}
	code, text = run(hello, "--push-binary")
	if code != 0 {
		t.Fatalf("another file at the copy's path: exit %d\n%s", code, text)
	}
	want, _ := os.ReadFile(bin)
	if b, _ := os.ReadFile(copies[1]); !bytes.Equal(b, want) {
		t.Errorf("another file at the copy's path was not replaced by this binary")
	}
}

// Two hosts whose users share one home directory (NFS, as on many client
// farms) get --push-binary at once: both may find the cache empty and
// copy this binary there, and neither fails on the other's copy. The run
// succeeds on both from the one copy, nothing else is left beside it,
// and the next run uses that copy as it is.
func TestPushBinaryToHostsSharingAHome(t *testing.T) {
	fleet := sshtest.StartSharedHome(t, 2)
	dir, bin := build(t)
	hosts := fleet.Aliases()
	run := func() (int, string) {
		return onHosts(t, bin, filepath.Join(dir, "missing"), fleet, hosts, "bench", "--target", "null://", "--duration", "1s", "--results", dir, "--push-binary")
	}
	copyPath := filepath.Join(fleet.Hosts[0].CacheDir, "cephbench", result.Version, "cephbench")
	want, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	check := func(run string) os.FileInfo {
		t.Helper()
		entries, _ := os.ReadDir(filepath.Dir(copyPath))
		if len(entries) != 1 || entries[0].Name() != "cephbench" {
			t.Fatalf("%s run: the shared cache holds %v; want only the copy", run, entries)
		}
		got, err := os.ReadFile(copyPath)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s run: the shared copy is not this binary (%d bytes of %d, %v)", run, len(got), len(want), err)
		}
		st, err := os.Stat(copyPath)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// The hosts' own cephbench is missing: each ran the shared copy.
	code, text := run()
	if code != 0 || !strings.Contains(text, "bench on 2 hosts") {
		t.Fatalf("first run: exit %d\n%s", code, text)
	}
	first := check("first")
	code, text = run()
	if code != 0 || !strings.Contains(text, "bench on 2 hosts") {
		t.Fatalf("second run: exit %d\n%s", code, text)
	}
	if second := check("second"); !os.SameFile(first, second) || !second.ModTime().Equal(first.ModTime()) {
		t.Errorf("the second run copied the binary again instead of using the copy there")
	}
}
