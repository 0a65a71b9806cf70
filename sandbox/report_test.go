package sandbox

import (
	"context"
	"strings"
	"testing"
)

// The exports are what "eval" needs: quoted values, S3's only with radosgw.
func TestWriteExports(t *testing.T) {
	dir := "/tmp/a sandbox"
	c := &Cluster{dir: dir, s3: &S3User{Endpoint: "http://127.0.0.1:7480", AccessKey: "AK", SecretKey: "S'K"}}
	var b strings.Builder
	c.WriteExports(&b)
	want := `export CEPHBENCH_SANDBOX='/tmp/a sandbox'
export CEPH_CONF='/tmp/a sandbox/ceph.conf'
export CEPH_KEYRING='/tmp/a sandbox/ceph.client.admin.keyring'
export AWS_ENDPOINT_URL=http://127.0.0.1:7480
export AWS_ACCESS_KEY_ID=AK
export AWS_SECRET_ACCESS_KEY='S'\''K'
`
	if b.String() != want {
		t.Errorf("exports:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestWriteServices(t *testing.T) {
	var b strings.Builder
	(&Cluster{dir: "/s"}).WriteServices(&b)
	if got := b.String(); got != `pool "cephbench"` {
		t.Errorf("without MDS or radosgw: %q", got)
	}
	b.Reset()
	c := &Cluster{dir: "/s", st: state{MDS: true}, s3: &S3User{Endpoint: "http://127.0.0.1:7480"}}
	c.WriteServices(&b)
	if got, want := b.String(), `pool "cephbench", CephFS "cephfs", S3 on http://127.0.0.1:7480 (keys in /s/rgw-user.json)`; got != want {
		t.Errorf("with both: %q, want %q", got, want)
	}
}

// A sandbox whose daemons all stopped lists them and says so, without
// asking the cluster.
func TestWriteStatusOfAStoppedSandbox(t *testing.T) {
	c := &Cluster{dir: t.TempDir(), st: state{OSDs: 1, Daemons: []daemon{mon, "osd.0"}}}
	var b strings.Builder
	err := c.WriteStatus(context.Background(), &b)
	if err == nil || err.Error() != "the sandbox is stopped" {
		t.Errorf("error %v, want the sandbox is stopped", err)
	}
	want := "sandbox " + c.dir + "\n  mon.a          stopped\n  osd.0          stopped\n"
	if b.String() != want {
		t.Errorf("status:\n%q\nwant:\n%q", b.String(), want)
	}
}
