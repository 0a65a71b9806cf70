package cluster

import (
	"encoding/json"
	"fmt"
)

// Status is the part of `ceph status -f json` that cephbench reads: the
// one decoding of it, for snapshots and for the sandbox's health checks.
type Status struct {
	FSID          string `json:"fsid"`
	ElectionEpoch int    `json:"election_epoch"`
	Health        struct {
		Status string                 `json:"status"`
		Checks map[string]HealthCheck `json:"checks"`
	} `json:"health"`
	MonMap struct {
		NumMons int `json:"num_mons"`
	} `json:"monmap"`
	OSDMap struct {
		// Epoch moves with every change of the OSD map: an OSD going
		// down, out, up or in, a flag set, a pool made.
		Epoch     int `json:"epoch"`
		NumOSDs   int `json:"num_osds"`
		NumUpOSDs int `json:"num_up_osds"`
		NumInOSDs int `json:"num_in_osds"`
	} `json:"osdmap"`
	PGMap struct {
		PGsByState []PGStateCount `json:"pgs_by_state"`
		NumPGs     int            `json:"num_pgs"`
		NumPools   int            `json:"num_pools"`
	} `json:"pgmap"`
	FSMap struct {
		// ByRank has one entry per active file system rank; Status is
		// "up:active" once the rank serves.
		ByRank []struct {
			Status string `json:"status"`
		} `json:"by_rank"`
		Standby int `json:"up:standby"`
	} `json:"fsmap"`
	MgrMap struct {
		Available   bool `json:"available"`
		NumStandbys int  `json:"num_standbys"`
	} `json:"mgrmap"`
}

// HealthCheck is one raised health check (OSD_DOWN, PG_DEGRADED...).
type HealthCheck struct {
	Severity string `json:"severity"` // HEALTH_WARN or HEALTH_ERR
	Summary  struct {
		Message string `json:"message"`
	} `json:"summary"`
}

// PGStateCount is how many PGs are in one combination of states
// ("active+clean", "active+undersized+degraded").
type PGStateCount struct {
	StateName string `json:"state_name"`
	Count     int    `json:"count"`
}

// ParseStatus decodes `ceph status -f json`.
func ParseStatus(b []byte) (*Status, error) {
	var s Status
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("ceph status: %w", err)
	}
	return &s, nil
}
