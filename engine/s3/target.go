// Package s3 is the engine for S3 object stores (Ceph's radosgw, or any S3
// service), scheme "s3": s3://BUCKET[/PREFIX], with the endpoint, region
// and other connection options in the query:
//
//	s3://bench/run1?endpoint=https://rgw.example:443&region=default&insecure=true
//
// Options: endpoint (default AWS_ENDPOINT_URL), region (default AWS_REGION,
// then AWS_DEFAULT_REGION, then the bucket's own), profile (the shared
// credentials profile, default AWS_PROFILE, then "default"), insecure
// (skip TLS verification), addressing (path, the default, or virtual for
// virtual-hosted buckets). Credentials never go in the target, which is
// saved in every result (query keys that look like them are refused):
// they come from OpenWith's caller, from
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, or from
// the shared credentials file (AWS_SHARED_CREDENTIALS_FILE, default
// ~/.aws/credentials), in that order.
//
// Objects are named as dirobj names them, under PREFIX:
// PREFIX/benchmark_data_<host>_<pid>_object<N>; a kept write records them
// in PREFIX/benchmark_last_metadata. S3 writes whole objects only, so a
// writing workload's object size is its block size; reads may address part
// of an object (a ranged GET). A session that writes creates the bucket
// if it is missing and removes it at the end if it created it and nothing
// else is in it; it removes only objects it created. Cleanup (the
// scheme's cleaner) removes a kept write the same way. Each measured
// request is sent once, never retried, with an unsigned payload (as over
// TLS), so that the client's hashing of the body is not in the latency.
//
// Beyond engine.Session, a Session gets an object reporting when its
// response began (time to first byte), and stats, lists and deletes.
package s3

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/cephbench/cephbench/engine"
)

// Target is a parsed s3:// location.
type Target struct {
	Bucket string
	// Prefix is where the objects go: empty, or ending in "/".
	Prefix string
	// Endpoint, Region and Profile are the query's; empty means the
	// environment's.
	Endpoint string
	Region   string
	Profile  string
	// Insecure skips the verification of the endpoint's TLS certificate.
	Insecure bool
	// VirtualHosted addresses the bucket as a host name
	// (BUCKET.endpoint) instead of a path.
	VirtualHosted bool
}

// Scheme is the scheme of S3 targets: s3://BUCKET[/PREFIX].
const Scheme = "s3"

// credentialKeys are query keys people use for credentials elsewhere;
// the target is saved in results, so they are refused by name.
var credentialKeys = []string{"access", "secret", "key", "token", "password", "credential"}

// ParseTarget parses the location of an s3:// target, BUCKET[/PREFIX] with
// an optional query. Errors are *engine.UsageError and never repeat the
// query's values.
func ParseTarget(loc string) (Target, error) {
	path, query, _ := strings.Cut(loc, "?")
	bucket, prefix, _ := strings.Cut(path, "/")
	t := Target{Bucket: bucket, Prefix: strings.TrimLeft(prefix, "/")}
	if t.Prefix != "" && !strings.HasSuffix(t.Prefix, "/") {
		t.Prefix += "/"
	}
	if t.Bucket == "" {
		return Target{}, engine.Usagef("s3: no bucket given (want s3://BUCKET[/PREFIX])")
	}
	if err := s3utils.CheckValidBucketNameStrict(t.Bucket); err != nil {
		return Target{}, engine.Usagef("s3: invalid bucket name %q: %v", t.Bucket, err)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return Target{}, engine.Usagef("s3: the target's query is not valid (want ?endpoint=URL&region=NAME)")
	}
	for k, v := range q {
		lk := strings.ToLower(k)
		for _, c := range credentialKeys {
			if strings.Contains(lk, c) {
				return Target{}, engine.Usagef("s3: %q: credentials never go in the target, which results record; use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or a profile", k)
			}
		}
		val := v[len(v)-1]
		switch lk {
		case "endpoint":
			t.Endpoint = val
		case "region":
			t.Region = val
		case "profile":
			t.Profile = val
		case "insecure":
			if t.Insecure, err = strconv.ParseBool(val); err != nil {
				return Target{}, engine.Usagef("s3: insecure must be true or false")
			}
		case "addressing":
			switch val {
			case "path":
			case "virtual":
				t.VirtualHosted = true
			default:
				return Target{}, engine.Usagef("s3: addressing must be path or virtual")
			}
		default:
			return Target{}, engine.Usagef("s3: unknown target option %q (known: endpoint, region, profile, insecure, addressing)", k)
		}
	}
	return t, nil
}

// Location is the inverse of ParseTarget.
func (t Target) Location() string {
	loc := t.Bucket
	if t.Prefix != "" {
		loc += "/" + t.Prefix
	}
	q := url.Values{}
	for k, v := range map[string]string{"endpoint": t.Endpoint, "region": t.Region, "profile": t.Profile} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if t.Insecure {
		q.Set("insecure", "true")
	}
	if t.VirtualHosted {
		q.Set("addressing", "virtual")
	}
	if len(q) > 0 {
		loc += "?" + q.Encode()
	}
	return loc
}

// String is the target as a user names it, without its options.
func (t Target) String() string { return "s3://" + t.Bucket + "/" + t.Prefix }

// endpointURL is the target's endpoint, or AWS_ENDPOINT_URL, checked: an
// http or https URL with a host and nothing after it.
func (t Target) endpointURL() (*url.URL, error) {
	raw, from := t.Endpoint, "endpoint"
	if raw == "" {
		raw, from = os.Getenv("AWS_ENDPOINT_URL"), "AWS_ENDPOINT_URL"
	}
	if raw == "" {
		return nil, engine.Usagef("s3: no endpoint: set AWS_ENDPOINT_URL or give one (http://HOST:PORT or https://HOST)")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, engine.Usagef("s3: %s is not a URL (want http://HOST:PORT or https://HOST)", from)
	case u.User != nil:
		return nil, engine.Usagef("s3: %s carries credentials; give them in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or a profile", from)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, engine.Usagef("s3: %s %q is not an http:// or https:// URL", from, raw)
	case u.Host == "":
		return nil, engine.Usagef("s3: %s %q has no host", from, raw)
	case strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "":
		return nil, engine.Usagef("s3: %s %q has a path or query; give only the scheme, host and port", from, raw)
	}
	return u, nil
}

// region is the target's region, or the environment's, or "" to ask the
// bucket.
func (t Target) region() string {
	for _, r := range []string{t.Region, os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION")} {
		if r != "" {
			return r
		}
	}
	return ""
}

// Credentials are an access key pair and, for temporary credentials, a
// session token.
type Credentials struct {
	AccessKey, SecretKey, SessionToken string
}

// String hides the keys, so that printing a value that holds credentials
// cannot leak them.
func (Credentials) String() string { return "s3.Credentials{redacted}" }

// GoString hides the keys from %#v too.
func (c Credentials) GoString() string { return c.String() }

// errNoCredentials says where a session looked for credentials.
var errNoCredentials = errors.New("s3: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, add a profile to ~/.aws/credentials (AWS_PROFILE selects it), or give cephbench s3 --access-key and --secret-key")

// resolve returns c if it holds keys, else the environment's, else the
// shared credentials file's profile. Errors are *engine.UsageError; they
// name the profile and never repeat the file's contents.
func (c Credentials) resolve(ctx context.Context, t Target) (Credentials, error) {
	switch {
	case c.AccessKey != "" && c.SecretKey != "":
		return c, nil
	case c.AccessKey != "" || c.SecretKey != "":
		return Credentials{}, engine.Usagef("s3: give both an access key and a secret key")
	}
	env := Credentials{os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")}
	switch {
	case env.AccessKey != "" && env.SecretKey != "":
		return env, nil
	case env.AccessKey != "" || env.SecretKey != "":
		return Credentials{}, engine.Usagef("s3: set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither")
	}
	return profileCredentials(ctx, t.Profile)
}

// profileCredentials reads a profile's keys from the shared credentials
// file (or ~/.aws/config, or its credential_process), the profile being
// profile, AWS_PROFILE or "default".
func profileCredentials(ctx context.Context, profile string) (Credentials, error) {
	named := true
	if profile == "" {
		profile = os.Getenv("AWS_PROFILE")
	}
	if profile == "" {
		profile, named = "default", false
	}
	v, err := credentials.NewFileAWSCredentials("", profile).GetWithContext(&credentials.CredContext{Client: http.DefaultClient, Context: ctx})
	if err != nil || v.AccessKeyID == "" || v.SecretAccessKey == "" {
		// The reader's errors can quote the file, keys and all.
		if !named {
			return Credentials{}, &engine.UsageError{Err: errNoCredentials}
		}
		return Credentials{}, engine.Usagef("s3: profile %q has no usable keys in the shared credentials file", profile)
	}
	return Credentials{v.AccessKeyID, v.SecretAccessKey, v.SessionToken}, nil
}
