// Package cluster records a Ceph cluster's state (health, daemons, pools,
// usage, OSD tree, versions) so every result against Ceph says what the
// cluster looked like. The types and their parsing are plain Go; collecting
// them needs a connection (collect.go, built with the ceph tag).
package cluster

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// Snapshot is the cluster's state at one moment.
type Snapshot struct {
	Taken    time.Time         `json:"taken"`
	FSID     string            `json:"fsid"`
	Health   Health            `json:"health"`
	Mons     int               `json:"mons"`
	Mgrs     int               `json:"mgrs"`
	OSDs     OSDCounts         `json:"osds"`
	MDS      int               `json:"mds"`
	PGStates map[string]int    `json:"pg_states"`
	Usage    Usage             `json:"usage"`
	Pools    []Pool            `json:"pools"`
	OSDTree  []TreeNode        `json:"osd_tree"`
	Versions map[string]string `json:"versions"` // daemon type → "16.2.15 (n)"; several when mixed

	// ElectionEpoch counts the monitors' elections: it moves when a
	// monitor stops, starts or loses touch with the others; 0 in
	// snapshots taken before it was recorded.
	ElectionEpoch int `json:"election_epoch,omitempty"`
}

// Health is the cluster's health with the message of each check.
type Health struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks,omitempty"`
}

// OSDCounts counts OSDs by state.
type OSDCounts struct {
	Total int `json:"total"`
	Up    int `json:"up"`
	In    int `json:"in"`
}

// Usage is raw capacity, in bytes.
type Usage struct {
	TotalBytes int64 `json:"total_bytes"`
	UsedBytes  int64 `json:"used_bytes"`
	AvailBytes int64 `json:"avail_bytes"`
}

// Pool is one pool's configuration and usage.
type Pool struct {
	Name         string   `json:"name"`
	ID           int      `json:"id"`
	Type         string   `json:"type"` // replicated or erasure
	Size         int      `json:"size"`
	MinSize      int      `json:"min_size"`
	PGNum        int      `json:"pg_num"`
	Applications []string `json:"applications,omitempty"`
	// Flags are the pool's OSD map flags, such as "full" or "full_quota".
	Flags       string `json:"flags,omitempty"`
	StoredBytes int64  `json:"stored_bytes"`
	Objects     int64  `json:"objects"`
}

// TreeNode is one node of the OSD tree.
type TreeNode struct {
	ID       int     `json:"id"`
	Name     string  `json:"name"`
	Type     string  `json:"type"`
	Weight   float64 `json:"weight,omitempty"`
	Status   string  `json:"status,omitempty"`
	Reweight float64 `json:"reweight,omitempty"`
	Depth    int     `json:"depth"`
}

// Pair is the state before and after a run, and what the cluster did
// during it.
type Pair struct {
	Before *Snapshot `json:"before,omitempty"`
	After  *Snapshot `json:"after,omitempty"`
	// During is nil for a run not watched (results saved before the
	// watch was, a watch turned off).
	During *During `json:"during,omitempty"`
	// Quiesced is what --quiesce did for the run; nil for a run not
	// quiesced.
	Quiesced *Quiesced `json:"quiesced,omitempty"`
}

// Outputs are the JSON answers of the mon commands a snapshot is made of.
type Outputs struct {
	Status, DF, PoolsDetail, OSDTree, Versions []byte
}

// Parse builds a snapshot from the mon commands' JSON.
func Parse(o Outputs, taken time.Time) (*Snapshot, error) {
	st, err := ParseStatus(o.Status)
	if err != nil {
		return nil, err
	}
	s := &Snapshot{
		Taken: taken.UTC(), FSID: st.FSID, ElectionEpoch: st.ElectionEpoch,
		Health: Health{Status: st.Health.Status},
		Mons:   st.MonMap.NumMons,
		OSDs:   OSDCounts{Total: st.OSDMap.NumOSDs, Up: st.OSDMap.NumUpOSDs, In: st.OSDMap.NumInOSDs},
		MDS:    len(st.FSMap.ByRank) + st.FSMap.Standby,
		Mgrs:   st.MgrMap.NumStandbys, PGStates: map[string]int{}, Versions: map[string]string{},
	}
	if st.MgrMap.Available {
		s.Mgrs++
	}
	for name, c := range st.Health.Checks {
		if s.Health.Checks == nil {
			s.Health.Checks = map[string]string{}
		}
		s.Health.Checks[name] = c.Summary.Message
	}
	for _, p := range st.PGMap.PGsByState {
		s.PGStates[p.StateName] = p.Count
	}

	usage, err := s.addDF(o.DF)
	if err == nil {
		err = s.addPools(o.PoolsDetail, usage)
	}
	if err == nil {
		err = s.addOSDTree(o.OSDTree)
	}
	if err == nil {
		err = s.addVersions(o.Versions)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// addDF sets the cluster's usage from `ceph df` and returns each pool's,
// by name.
func (s *Snapshot) addDF(b []byte) (map[string]Pool, error) {
	var df struct {
		Stats struct {
			Total int64 `json:"total_bytes"`
			Used  int64 `json:"total_used_raw_bytes"`
			Avail int64 `json:"total_avail_bytes"`
		} `json:"stats"`
		Pools []struct {
			Name  string `json:"name"`
			ID    int    `json:"id"`
			Stats struct {
				Stored  int64 `json:"stored"`
				Objects int64 `json:"objects"`
			} `json:"stats"`
		} `json:"pools"`
	}
	if err := json.Unmarshal(b, &df); err != nil {
		return nil, fmt.Errorf("ceph df: %w", err)
	}
	s.Usage = Usage{TotalBytes: df.Stats.Total, UsedBytes: df.Stats.Used, AvailBytes: df.Stats.Avail}
	usage := map[string]Pool{}
	for _, p := range df.Pools {
		usage[p.Name] = Pool{StoredBytes: p.Stats.Stored, Objects: p.Stats.Objects}
	}
	return usage, nil
}

// addPools adds the pools of `ceph osd pool ls detail`, with their usage.
func (s *Snapshot) addPools(b []byte, usage map[string]Pool) error {
	var pools []struct {
		Name    string                     `json:"pool_name"`
		ID      int                        `json:"pool_id"`
		Type    int                        `json:"type"`
		Size    int                        `json:"size"`
		MinSize int                        `json:"min_size"`
		PGNum   int                        `json:"pg_num"`
		Flags   string                     `json:"flags_names"`
		Apps    map[string]json.RawMessage `json:"application_metadata"`
	}
	if err := json.Unmarshal(b, &pools); err != nil {
		return fmt.Errorf("ceph osd pool ls detail: %w", err)
	}
	for _, p := range pools {
		pool := Pool{Name: p.Name, ID: p.ID, Type: "replicated", Size: p.Size, MinSize: p.MinSize, PGNum: p.PGNum, Flags: p.Flags,
			StoredBytes: usage[p.Name].StoredBytes, Objects: usage[p.Name].Objects}
		if p.Type == 3 {
			pool.Type = "erasure"
		}
		for app := range p.Apps {
			pool.Applications = append(pool.Applications, app)
		}
		sort.Strings(pool.Applications)
		s.Pools = append(s.Pools, pool)
	}
	return nil
}

// addOSDTree adds `ceph osd tree`'s nodes, depth first from each root.
func (s *Snapshot) addOSDTree(b []byte) error {
	var tree struct {
		Nodes []struct {
			ID       int     `json:"id"`
			Name     string  `json:"name"`
			Type     string  `json:"type"`
			Weight   float64 `json:"crush_weight"`
			Status   string  `json:"status"`
			Reweight float64 `json:"reweight"`
			Children []int   `json:"children"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(b, &tree); err != nil {
		return fmt.Errorf("ceph osd tree: %w", err)
	}
	byID := map[int]int{}
	for i, n := range tree.Nodes {
		byID[n.ID] = i
	}
	// Each node is printed once: a mangled answer whose children lead back
	// to their parent would otherwise be walked without end.
	seen := map[int]bool{}
	var walk func(id, depth int)
	walk = func(id, depth int) {
		i, ok := byID[id]
		if !ok || seen[id] {
			return
		}
		seen[id] = true
		n := tree.Nodes[i]
		s.OSDTree = append(s.OSDTree, TreeNode{ID: n.ID, Name: n.Name, Type: n.Type, Weight: n.Weight,
			Status: n.Status, Reweight: n.Reweight, Depth: depth})
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	for _, n := range tree.Nodes {
		if n.Type == "root" {
			walk(n.ID, 0)
		}
	}
	return nil
}

// addVersions adds `ceph versions`, per daemon type.
func (s *Snapshot) addVersions(b []byte) error {
	var versions map[string]map[string]int
	if err := json.Unmarshal(b, &versions); err != nil {
		return fmt.Errorf("ceph versions: %w", err)
	}
	for daemon, vs := range versions {
		if daemon == "overall" || len(vs) == 0 {
			continue
		}
		var parts []string
		for v, n := range vs {
			parts = append(parts, fmt.Sprintf("%s (%d)", shortVersion(v), n))
		}
		sort.Strings(parts)
		s.Versions[daemon] = strings.Join(parts, ", ")
	}
	return nil
}

// shortVersion turns "ceph version 16.2.15 (618f...) pacific (stable)"
// into "16.2.15 pacific".
func shortVersion(v string) string {
	f := strings.Fields(v)
	if len(f) >= 5 && f[0] == "ceph" && f[1] == "version" {
		return f[2] + " " + f[4]
	}
	return v
}

// Print writes the snapshot as `ceph status`, `ceph df` and `ceph osd
// tree` would sum it up.
func (s *Snapshot) Print(w io.Writer) {
	fmt.Fprintf(w, "cluster %s, taken %s\n", s.FSID, s.Taken.Format(time.RFC3339))
	fmt.Fprintf(w, "health: %s\n", s.Health.Status)
	checks := make([]string, 0, len(s.Health.Checks))
	for name := range s.Health.Checks {
		checks = append(checks, name)
	}
	sort.Strings(checks)
	for _, c := range checks {
		fmt.Fprintf(w, "  %s: %s\n", c, s.Health.Checks[c])
	}
	fmt.Fprintf(w, "daemons: %d mon, %d mgr, %d osd (%d up, %d in), %d mds\n",
		s.Mons, s.Mgrs, s.OSDs.Total, s.OSDs.Up, s.OSDs.In, s.MDS)
	states := make([]string, 0, len(s.PGStates))
	for st, n := range s.PGStates {
		states = append(states, fmt.Sprintf("%d %s", n, st))
	}
	sort.Strings(states)
	fmt.Fprintf(w, "pgs: %s\n", strings.Join(states, ", "))
	fmt.Fprintf(w, "usage: %s used, %s / %s avail\n", Bytes(s.Usage.UsedBytes), Bytes(s.Usage.AvailBytes), Bytes(s.Usage.TotalBytes))
	daemons := make([]string, 0, len(s.Versions))
	for d := range s.Versions {
		daemons = append(daemons, d)
	}
	sort.Strings(daemons)
	for _, d := range daemons {
		fmt.Fprintf(w, "version %s: %s\n", d, s.Versions[d])
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\nPOOL\tID\tTYPE\tSIZE\tMIN_SIZE\tPG_NUM\tAPPLICATION\tSTORED\tOBJECTS")
	for _, p := range s.Pools {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%s\t%s\t%d\n", p.Name, p.ID, p.Type, p.Size, p.MinSize, p.PGNum,
			strings.Join(p.Applications, ","), Bytes(p.StoredBytes), p.Objects)
	}
	fmt.Fprintln(tw, "\nID\tWEIGHT\tTYPE NAME\tSTATUS\tREWEIGHT")
	for _, n := range s.OSDTree {
		weight, reweight := "", ""
		if n.Type == "osd" {
			weight, reweight = fmt.Sprintf("%.5f", n.Weight), fmt.Sprintf("%.5f", n.Reweight)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s%s %s\t%s\t%s\n", n.ID, weight, strings.Repeat("  ", n.Depth), n.Type, n.Name, n.Status, reweight)
	}
	tw.Flush()
}

// Bytes formats a byte count in binary units with one decimal: "1.5 GiB",
// "512 B".
func Bytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	v := float64(n)
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}
