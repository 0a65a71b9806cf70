package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/cephbench/cephbench/cluster"
)

// toleratedChecks are health checks that do not make a sandbox unhealthy.
// They come from its clients or its host, not from the cluster's state:
// POOL_APP_NOT_ENABLED from a test that made a pool and did not tag it,
// OSD_SLOW_PING_TIME_* from a build machine too busy to answer the OSDs'
// heartbeats within a second (they stay for minutes after the load).
var toleratedChecks = map[string]bool{
	"POOL_APP_NOT_ENABLED":     true,
	"OSD_SLOW_PING_TIME_BACK":  true,
	"OSD_SLOW_PING_TIME_FRONT": true,
}

// errNotRunning is the health problem no wait can cure.
var errNotRunning = errors.New("not running")

// expect is what a healthy sandbox has.
type expect struct {
	osds  int
	pools int // pools in the OSD map
	pgs   int // their PGs, all of which must be active+clean
	mds   bool
}

// problems returns why s is not a healthy sandbox, or nothing if it is.
func problems(s *cluster.Status, want expect) []string {
	var out []string
	if !s.MgrMap.Available {
		out = append(out, "no active mgr")
	}
	if o := s.OSDMap; o.NumOSDs != want.osds || o.NumUpOSDs != want.osds || o.NumInOSDs != want.osds {
		out = append(out, fmt.Sprintf("%d of %d OSDs up, %d in", o.NumUpOSDs, want.osds, o.NumInOSDs))
	}
	clean := 0
	var states []string
	for _, st := range s.PGMap.PGsByState {
		if st.StateName == "active+clean" {
			clean += st.Count
		} else {
			states = append(states, fmt.Sprintf("%d %s", st.Count, st.StateName))
		}
	}
	switch {
	case len(states) > 0:
		sort.Strings(states)
		out = append(out, "PGs "+strings.Join(states, ", "))
	case s.PGMap.NumPools != want.pools || clean != want.pgs:
		// The mgr reports PGs, and lags the OSD map by a moment.
		out = append(out, fmt.Sprintf("mgr knows %d PGs in %d pools, the OSD map has %d in %d", clean, s.PGMap.NumPools, want.pgs, want.pools))
	}
	if want.mds && !hasActiveMDS(s) {
		out = append(out, "no active MDS")
	}
	var checks []string
	for name, ch := range s.Health.Checks {
		if !toleratedChecks[name] {
			checks = append(checks, fmt.Sprintf("%s %s: %s", ch.Severity, name, ch.Summary.Message))
		}
	}
	sort.Strings(checks)
	out = append(out, checks...)
	if len(checks) == 0 && s.Health.Status != "HEALTH_OK" && s.Health.Status != "HEALTH_WARN" {
		out = append(out, "health "+s.Health.Status)
	}
	return out
}

func hasActiveMDS(s *cluster.Status) bool {
	for _, r := range s.FSMap.ByRank {
		if r.Status == "up:active" {
			return true
		}
	}
	return false
}

// CheckHealth returns nil if the sandbox is healthy, and otherwise an
// error that lists what is not. Healthy means: every daemon the sandbox
// started is running; a mgr is active; every OSD is up and in; the mgr
// reports every PG of every pool in the OSD map (the sandbox's own pool
// among them) and all of them are active+clean; with an MDS, the file
// system has an active rank; with radosgw, its endpoint answers HTTP; and
// the health checks are none but those that a one-host sandbox raises
// for reasons outside the cluster (a pool a client did not tag with an
// application, heartbeats slowed by a busy host). HEALTH_WARN with only
// those counts as healthy.
func (c *Cluster) CheckHealth(ctx context.Context) error {
	for _, d := range c.Daemons() {
		if d.PID == 0 {
			return c.daemonError(daemon(d.Name), fmt.Errorf("%s is %w", d.Name, errNotRunning))
		}
	}
	out, err := c.Ceph(ctx, "status", "-f", "json")
	if err != nil {
		return err
	}
	s, err := cluster.ParseStatus(out)
	if err != nil {
		return err
	}
	out, err = c.Ceph(ctx, "osd", "pool", "ls", "detail", "-f", "json")
	if err != nil {
		return err
	}
	var pools []struct {
		PGNum int `json:"pg_num"`
	}
	if err := json.Unmarshal(out, &pools); err != nil {
		return fmt.Errorf("ceph osd pool ls: %w", err)
	}
	want := expect{osds: c.st.OSDs, pools: len(pools), mds: c.st.MDS}
	for _, p := range pools {
		want.pgs += p.PGNum
	}
	p := problems(s, want)
	if c.st.RGWPort != 0 && (c.s3 == nil || !httpAnswers(ctx, c.s3.Endpoint)) {
		p = append(p, "radosgw does not answer")
	}
	if len(p) > 0 {
		return errors.New(strings.Join(p, "; "))
	}
	return nil
}

// WaitHealthy checks the sandbox's health every second until it is
// healthy in the sense of CheckHealth, and returns nil then. It returns
// at once if a daemon has stopped, with the end of its log; and when ctx
// is done, with the last reasons it was not healthy.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	for {
		err := c.CheckHealth(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ctx.Err(), err)
		}
		if errors.Is(err, errNotRunning) {
			return err
		}
		if serr := sleep(ctx, time.Second); serr != nil {
			return fmt.Errorf("%w: %w", serr, err)
		}
	}
}

// httpAnswers reports whether an HTTP server answers at url.
func httpAnswers(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}
