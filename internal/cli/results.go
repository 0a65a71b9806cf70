package cli

import (
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
)

// defaultResults is where commands save their results unless told.
const defaultResults = "cephbench-results"

// resultsFlag registers --results, the folder results are saved under.
func resultsFlag(fl *pflag.FlagSet, dir *string) {
	fl.StringVar(dir, "results", defaultResults, "folder under which results are saved")
}

// watchFlag registers --cluster-interval, how often a command on a Ceph
// target samples the cluster during its run, and --quiesce.
func (env Env) watchFlag(fl *pflag.FlagSet) {
	fl.Var(&env.watch.Interval, "cluster-interval", "sample the Ceph cluster's own view this often during the run (0: do not)")
	fl.BoolVar(&env.watch.Quiesce, "quiesce", false, "set the OSD map flags noscrub and nodeep-scrub for the run, and clear those it set after")
}

// stampLayout is the local time that starts the names of saved results
// and results folders, so that they sort by when they ran.
const stampLayout = "20060102-150405"

// stamped is the path, in dir, of a result or folder called name made
// now.
func stamped(dir, name string) string {
	return filepath.Join(dir, time.Now().Format(stampLayout)+"-"+name)
}
