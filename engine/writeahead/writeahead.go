// Package writeahead is the record a session that writes objects puts on
// its target before it creates the first one, and removes only once it
// has removed them, so that a run killed at any moment (SIGKILL: nothing
// of its own runs) leaves nothing a later cleanup cannot find and prove
// cephbench's. A record names its objects by a stem that only cephbench
// writes (rados bench's "benchmark_data_HOST_PID_object", load-gen's
// "cephbench_loadgen_HOST_PID_RUN_obj"): an object is the record's when
// its name is the stem and a number.
package writeahead

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"
)

// NamePrefix begins the name of every record: the record of stem S is
// the object (or file) NamePrefix + S, next to S's objects.
const NamePrefix = "cephbench_writing_"

// stems are the beginnings of the stems cephbench writes objects under;
// a record naming any other is not cephbench's and is never acted on.
var stems = []string{"benchmark_data_", "cephbench_loadgen_"}

// maxSize bounds what is read of a record: anything larger is not one.
const maxSize = 4 << 10

// Record is what a session is about to create on its target.
type Record struct {
	// Stem names the objects: Stem followed by a number.
	Stem string `json:"stem"`
	// Metadata, if set, names the metadata object a kept write records
	// itself in (rados bench's run name), which the cleanup removes too
	// when it describes these objects.
	Metadata string `json:"metadata,omitempty"`
	// CreatedBucket says the session made the bucket holding the
	// objects, so the cleanup removes it once it is empty.
	CreatedBucket bool `json:"created_bucket,omitempty"`
	// CreatedDir says the session made the directory holding the
	// record, so the cleanup removes it once it is empty.
	CreatedDir bool `json:"created_dir,omitempty"`
	// Host, PID and Started name the process that wrote the record, so
	// that a cleanup can tell a run still writing from a dead one.
	// Records of cephbench before 2026-12 have none of them.
	Host    string    `json:"host,omitempty"`
	PID     int       `json:"pid,omitempty"`
	Started time.Time `json:"started,omitzero"`
}

// Mine returns r as written by this process, now.
func (r Record) Mine() Record {
	r.Host, r.PID, r.Started = thisHost(), os.Getpid(), time.Now()
	return r
}

// Name is the name of r's record.
func (r Record) Name() string { return NamePrefix + r.Stem }

// Encode returns the record's bytes.
func (r Record) Encode() []byte {
	b, _ := json.Marshal(r) // a struct of strings and booleans always encodes
	return append(b, '\n')
}

// IsName reports whether name is a record's name.
func IsName(name string) bool {
	return strings.HasPrefix(name, NamePrefix) && validStem(name[len(NamePrefix):])
}

// Decode reads the record stored under name. A record whose stem is not
// one cephbench writes, or does not match its name, is an error: nothing
// is removed on its word.
func Decode(name string, b []byte) (Record, error) {
	var r Record
	if len(b) > maxSize || json.Unmarshal(b, &r) != nil || !validStem(r.Stem) || r.Name() != name {
		return Record{}, fmt.Errorf("%s is not a cephbench write record", name)
	}
	return r, nil
}

// Owns reports whether name is one of r's objects: r's stem followed by
// digits.
func (r Record) Owns(name string) bool {
	digits, ok := strings.CutPrefix(name, r.Stem)
	if !ok || digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func validStem(stem string) bool {
	if strings.ContainsAny(stem, "/\x00") {
		return false
	}
	for _, s := range stems {
		if len(stem) > len(s) && strings.HasPrefix(stem, s) {
			return true
		}
	}
	return false
}
