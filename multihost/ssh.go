package multihost

import (
	"context"
	"regexp"

	"github.com/cephbench/cephbench/transport/ssh"
)

var unsafeLabel = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// OverSSH starts on each of the hosts names its agent's command line,
// agents[i], with the system's ssh, and returns them as the run's hosts,
// each labelled by its name made safe for a file name, and closeAll,
// which ends every ssh (and so every agent's stdin). An ssh that cannot
// start is the error; one that cannot log in says so when its host is
// read. The sessions outlive ctx (its values are kept): when ctx ends,
// Run stops the agents and still reads what they measured through them,
// and closeAll ends them.
func OverSSH(ctx context.Context, names []string, agents [][]string, opts ssh.Options) (hosts []Host, closeAll func(), err error) {
	ctx = context.WithoutCancel(ctx)
	var sessions []*ssh.Session
	closeAll = func() {
		for _, s := range sessions {
			s.Close()
		}
	}
	for i, name := range names {
		s, err := ssh.Start(ctx, name, agents[i], opts)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		sessions = append(sessions, s)
		hosts = append(hosts, Host{Label: unsafeLabel.ReplaceAllString(name, "-"), In: s.Stdin(), Out: s.Stdout(), Ended: s.Wait})
	}
	return hosts, closeAll, nil
}
