package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cephbench/cephbench/internal/sshtest"
)

// rssKiB is a process's resident set size, from /proc.
func rssKiB(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// cpuTicks is the CPU time, in clock ticks, that a process and its
// children still running (the coordinator's ssh) have used, from /proc.
func cpuTicks(pid int) int64 {
	var total int64
	own := func(p string) {
		b, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			return
		}
		// The fields after the command name, which may hold spaces.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			total += u + s
		}
	}
	p := strconv.Itoa(pid)
	own(p)
	children, _ := os.ReadFile("/proc/" + p + "/task/" + p + "/children")
	for _, c := range strings.Fields(string(children)) {
		own(c)
	}
	return total
}

// BenchmarkCoordinatorOfSixteenHosts runs one bench on 16 hosts behind
// real sshd on loopback (null engine, queue depth 64, RUNTIME seconds,
// default 60) and reports what the coordinator costs: its CPU (with its
// ssh clients) as a share of one core over the whole run, which counts
// ssh's 16 logins, and from 10 s in to the run's last second; and how much
// its memory grew from 10 s in to the end.
//
//	go test ./cmd/cephbench -run '^$' -bench CoordinatorOfSixteenHosts -benchtime 1x
func BenchmarkCoordinatorOfSixteenHosts(b *testing.B) {
	runtime := 60 * time.Second
	if s := os.Getenv("RUNTIME"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			b.Fatalf("RUNTIME=%q: want seconds", s)
		}
		runtime = time.Duration(n) * time.Second
	}
	fleet := sshtest.Start(b, 16)
	dir, bin := build(b)
	for b.Loop() {
		cmd := exec.Command(bin, "bench", "--target", "null://", "--iodepth", "64", "--duration", runtime.String(), "--quiet",
			"--hosts", strings.Join(fleet.Aliases(), ","), "--ssh-config", fleet.ConfigFile, "--remote-cephbench", bin, "--results", dir)
		began := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		early, earlyCPU, earlyAt := rssKiB(cmd.Process.Pid), cpuTicks(cmd.Process.Pid), time.Now()
		late, lateCPU, lateAt := early, earlyCPU, earlyAt
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		for waiting := true; waiting; {
			select {
			case err := <-done:
				if err != nil {
					b.Fatalf("the coordinator: %v", err)
				}
				waiting = false
			case <-time.After(time.Second):
				if r := rssKiB(cmd.Process.Pid); r > 0 {
					late, lateCPU, lateAt = r, cpuTicks(cmd.Process.Pid), time.Now()
				}
			}
		}
		wall := time.Since(began)
		cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "coordinator-cpu-%")
		// /proc counts CPU in clock ticks of 1/100 s (USER_HZ).
		b.ReportMetric(float64(lateCPU-earlyCPU)/lateAt.Sub(earlyAt).Seconds(), "cpu-from-10s-%")
		b.ReportMetric(float64(early), "rss-at-10s-KiB")
		b.ReportMetric(float64(late-early), "rss-growth-KiB")
	}
}
