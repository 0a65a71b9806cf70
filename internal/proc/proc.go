// Package proc tells whether a process that recorded itself somewhere
// (a --quiesce run's config key, a write record) still runs on this host.
package proc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the kernel's USER_HZ, the unit of a process's start time
// in /proc/PID/stat: 100 on every Linux port but Alpha and IA-64.
const clockTicks = 100

// Alive reports whether pid is the process that recorded itself at
// start: it runs and began before start (a process that began later was
// given the PID of a dead one). Without /proc it cannot tell, and says
// yes, so that nothing of a live run is undone.
func Alive(pid int, start time.Time) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		_, selfErr := os.Stat("/proc/self/stat")
		return selfErr != nil
	}
	began, ok := processStart(stat)
	// Boot time is known to the second.
	return !ok || !began.After(start.Add(2*time.Second))
}

// processStart reads when a process began from its /proc/PID/stat.
func processStart(stat []byte) (time.Time, bool) {
	// The command name, in parentheses, may hold spaces.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return time.Time{}, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	// starttime is field 22; fields[0] is field 3.
	if len(fields) < 20 {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	boot, ok := bootTime()
	if err != nil || !ok {
		return time.Time{}, false
	}
	return boot.Add(time.Duration(ticks) * time.Second / clockTicks), true
}

func bootTime() (time.Time, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Unix(s, 0), err == nil
		}
	}
	return time.Time{}, false
}
