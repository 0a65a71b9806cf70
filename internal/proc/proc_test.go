package proc

import (
	"os"
	"testing"
	"time"
)

func TestAliveTellsAReusedPID(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	if !Alive(os.Getpid(), time.Now()) {
		t.Error("this process is not alive")
	}
	if Alive(os.Getpid(), time.Now().Add(-24*time.Hour*365*30)) {
		t.Error("this process recorded itself before it began")
	}
	if Alive(1<<30, time.Now()) {
		t.Error("a PID above pid_max is alive")
	}
}
