package s3

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cephbench/cephbench/engine"
)

func TestParseTarget(t *testing.T) {
	good := map[string]Target{
		"bench":                  {Bucket: "bench"},
		"bench/run1":             {Bucket: "bench", Prefix: "run1/"},
		"bench//a/b/":            {Bucket: "bench", Prefix: "a/b/"},
		"bench?region=default":   {Bucket: "bench", Region: "default"},
		"bench?insecure=true":    {Bucket: "bench", Insecure: true},
		"bench?addressing=path":  {Bucket: "bench"},
		"b-1?addressing=virtual": {Bucket: "b-1", VirtualHosted: true},
		"bench/p?endpoint=https%3A%2F%2F127.0.0.1%3A8443&profile=ceph": {
			Bucket: "bench", Prefix: "p/", Endpoint: "https://127.0.0.1:8443", Profile: "ceph",
		},
	}
	for loc, want := range good {
		got, err := ParseTarget(loc)
		if err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", loc, got, err, want)
			continue
		}
		if back, err := ParseTarget(got.Location()); err != nil || back != got {
			t.Errorf("ParseTarget(%q).Location() = %q, which parses as %+v, %v", loc, got.Location(), back, err)
		}
	}
	bad := []string{"", "/run", "Bench", "b_x", "bench?frobnicate=1", "bench?insecure=maybe", "bench?addressing=dns", "bench?%zz"}
	for _, loc := range bad {
		if _, err := ParseTarget(loc); !engine.IsUsage(err) {
			t.Errorf("ParseTarget(%q): %v; want a usage error", loc, err)
		}
	}
}

// A target is saved in every result: credentials are refused there, and
// the refusal does not repeat them.
func TestTargetRefusesCredentials(t *testing.T) {
	const secret = "wJalrXUtnFEMIK7MDENGbPxRfiCYSECRET"
	for _, loc := range []string{
		"bench?secret_key=" + secret, "bench?access_key=" + secret, "bench?aws_secret_access_key=" + secret,
		"bench?SessionToken=" + secret, "bench?password=" + secret,
	} {
		_, err := ParseTarget(loc)
		if !engine.IsUsage(err) {
			t.Errorf("ParseTarget(%q) accepted credentials: %v", loc, err)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("ParseTarget's error repeats the secret: %v", err)
		}
	}
	tg := Target{Bucket: "bench", Endpoint: "http://user:" + secret + "@127.0.0.1:8000"}
	if _, err := tg.endpointURL(); !engine.IsUsage(err) || strings.Contains(err.Error(), secret) {
		t.Errorf("an endpoint with credentials: %v; want a usage error without them", err)
	}
}

func TestEndpoint(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "")
	if _, err := (Target{Bucket: "b"}).endpointURL(); !engine.IsUsage(err) || !strings.Contains(err.Error(), "AWS_ENDPOINT_URL") {
		t.Errorf("no endpoint anywhere: %v; want a usage error that names AWS_ENDPOINT_URL", err)
	}
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:7480")
	if u, err := (Target{Bucket: "b"}).endpointURL(); err != nil || u.Host != "127.0.0.1:7480" {
		t.Errorf("AWS_ENDPOINT_URL is the default: %v, %v", u, err)
	}
	if u, err := (Target{Bucket: "b", Endpoint: "https://127.0.0.2/"}).endpointURL(); err != nil || u.Host != "127.0.0.2" || u.Scheme != "https" {
		t.Errorf("the target's endpoint comes first: %v, %v", u, err)
	}
	for _, e := range []string{"127.0.0.1:7480", "ftp://127.0.0.1", "http://", "http://127.0.0.1/s3", "http://127.0.0.1?x=1"} {
		if _, err := (Target{Bucket: "b", Endpoint: e}).endpointURL(); !engine.IsUsage(err) {
			t.Errorf("endpoint %q: %v; want a usage error", e, err)
		}
	}
}

// clearCredentialEnv makes the test see only the credentials it sets.
func clearCredentialEnv(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"} {
		t.Setenv(k, "")
	}
	return home
}

func TestCredentialsOrder(t *testing.T) {
	home := clearCredentialEnv(t)
	tg := Target{Bucket: "b"}
	if _, err := (Credentials{}).resolve(t.Context(), tg); !engine.IsUsage(err) || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Errorf("no credentials anywhere: %v; want a usage error saying where to put them", err)
	}

	if err := os.MkdirAll(filepath.Join(home, ".aws"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := "[default]\naws_access_key_id = FILEDEFAULT\naws_secret_access_key = filedefaultsecret\n" +
		"[ceph]\naws_access_key_id = FILECEPH\naws_secret_access_key = filecephsecret\n"
	if err := os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(what string, given Credentials, target Target, want string) {
		t.Helper()
		c, err := given.resolve(t.Context(), target)
		if err != nil || c.AccessKey != want {
			t.Errorf("%s: access key %q, %v; want %q", what, c.AccessKey, err, want)
		}
	}
	check("default profile", Credentials{}, tg, "FILEDEFAULT")
	t.Setenv("AWS_PROFILE", "ceph")
	check("AWS_PROFILE", Credentials{}, tg, "FILECEPH")
	check("the target's profile", Credentials{}, Target{Bucket: "b", Profile: "default"}, "FILEDEFAULT")
	t.Setenv("AWS_ACCESS_KEY_ID", "ENVKEY")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "envsecret")
	check("the environment over the file", Credentials{}, tg, "ENVKEY")
	check("the caller's over the environment", Credentials{AccessKey: "FLAGKEY", SecretKey: "flagsecret"}, tg, "FLAGKEY")

	if _, err := (Credentials{AccessKey: "FLAGKEY"}).resolve(t.Context(), tg); !engine.IsUsage(err) {
		t.Errorf("an access key without a secret: %v; want a usage error", err)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	if _, err := (Credentials{}).resolve(t.Context(), tg); !engine.IsUsage(err) {
		t.Errorf("AWS_ACCESS_KEY_ID without AWS_SECRET_ACCESS_KEY: %v; want a usage error", err)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_PROFILE", "nosuch")
	if _, err := (Credentials{}).resolve(t.Context(), tg); !engine.IsUsage(err) || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("a missing profile: %v; want a usage error naming it", err)
	}
}

// A credentials file the reader cannot parse is not quoted back.
func TestBrokenCredentialsFileIsNotQuoted(t *testing.T) {
	home := clearCredentialEnv(t)
	t.Setenv("AWS_PROFILE", "ceph")
	if err := os.MkdirAll(filepath.Join(home, ".aws"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := "[ceph\naws_secret_access_key topsecretvalue\n"
	if err := os.WriteFile(filepath.Join(home, ".aws", "credentials"), []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := (Credentials{}).resolve(t.Context(), Target{Bucket: "b"})
	if !engine.IsUsage(err) || strings.Contains(err.Error(), "topsecretvalue") {
		t.Errorf("a broken credentials file: %v; want a usage error that does not quote it", err)
	}
}

func TestCredentialsDoNotPrint(t *testing.T) {
	c := Credentials{AccessKey: "AKIDPRINTED", SecretKey: "secretprinted", SessionToken: "tokenprinted"}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		out := fmt.Sprintf(verb, c) + fmt.Sprintf(verb, struct{ C Credentials }{c})
		for _, k := range []string{"AKIDPRINTED", "secretprinted", "tokenprinted"} {
			if strings.Contains(out, k) {
				t.Errorf("Sprintf(%q) shows %s: %s", verb, k, out)
			}
		}
	}
}
