package s3

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/cephbench/cephbench/engine"
)

// controlRetries is how often setup and cleanup requests are tried, as
// S3 tools retry them; measured requests are tried once, so that a
// failure is counted, not hidden in a longer latency.
const controlRetries = 3

// client is a connection to a target's bucket: ctl for setup and cleanup,
// data for measured ops. Both are safe for concurrent use.
type client struct {
	ctl, data *minio.Client
	target    Target
	endpoint  string // scheme://host, for messages
	creds     *credentials.Credentials
	transport *http.Transport
	secure    bool
}

// dial connects to t's endpoint with creds (resolved as Credentials.resolve
// does), keeping up to conns connections open, and reports whether the
// bucket exists. The data client is set up by useRegion, once the bucket
// exists. Every error is an *engine.UsageError: wrong keys, an endpoint
// that cannot be reached, a bucket of someone else's.
func dial(ctx context.Context, t Target, creds Credentials, conns int) (*client, bool, error) {
	u, err := t.endpointURL()
	if err != nil {
		return nil, false, err
	}
	creds, err = creds.resolve(ctx, t)
	if err != nil {
		return nil, false, err
	}
	c := &client{
		target:   t,
		endpoint: u.Scheme + "://" + u.Host,
		creds:    credentials.NewStaticV4(creds.AccessKey, creds.SecretKey, creds.SessionToken),
		secure:   u.Scheme == "https",
		transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        conns + controlConns,
			MaxIdleConnsPerHost: conns + controlConns,
			IdleConnTimeout:     time.Minute,
			TLSHandshakeTimeout: 10 * time.Second,
			// A body's upload is not bounded, only the wait after it.
			ResponseHeaderTimeout: DefaultOpTimeout,
			// Objects are read as stored, never decompressed.
			DisableCompression: true,
			TLSClientConfig:    &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.Insecure},
		},
	}
	if c.ctl, err = c.newClient(t.region(), controlRetries); err != nil {
		return nil, false, engine.Usagef("s3: endpoint %s: %v", c.endpoint, err)
	}
	exists, err := c.probe(ctx)
	if err != nil {
		c.close()
		return nil, false, err
	}
	return c, exists, nil
}

// controlConns are the connections kept for setup and cleanup beyond the
// workload's.
const controlConns = 4

func (c *client) newClient(region string, retries int) (*minio.Client, error) {
	lookup := minio.BucketLookupPath
	if c.target.VirtualHosted {
		lookup = minio.BucketLookupDNS
	}
	u, _ := url.Parse(c.endpoint) // checked by dial
	return minio.New(u.Host, &minio.Options{
		Creds: c.creds, Secure: c.secure, Transport: c.transport, Region: region,
		BucketLookup: lookup, MaxRetries: retries,
	})
}

// useRegion makes the data client once the bucket exists, with the
// target's region or the bucket's, so that no measured op has to look it
// up first.
func (c *client) useRegion(ctx context.Context) error {
	region := c.target.region()
	if region == "" {
		var err error
		if region, err = c.ctl.GetBucketLocation(ctx, c.target.Bucket); err != nil {
			return c.setupError(ctx, "GET ?location", err)
		}
	}
	var err error
	if c.data, err = c.newClient(region, 1); err != nil {
		return engine.Usagef("s3: endpoint %s: %v", c.endpoint, err)
	}
	return nil
}

// probe lists at most one key of the target's prefix: the one request
// that tells a missing bucket, wrong keys and an unreachable endpoint
// apart, since a failed listing says why in its body.
func (c *client) probe(ctx context.Context) (exists bool, err error) {
	for obj := range c.ctl.ListObjectsIter(ctx, c.target.Bucket, minio.ListObjectsOptions{Prefix: c.target.Prefix, MaxKeys: 1, Recursive: true}) {
		err = obj.Err
		break
	}
	if err == nil {
		return true, nil
	}
	if code(err) == minio.NoSuchBucket {
		return false, nil
	}
	return false, c.setupError(ctx, "list", err)
}

// setupError explains a failed setup request as a usage problem, unless
// the run was interrupted.
func (c *client) setupError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return err
	}
	bucket := c.target.Bucket
	switch code(err) {
	case "":
	case "InvalidAccessKeyId":
		return engine.Usagef("s3: %s does not know the access key (InvalidAccessKeyId)", c.endpoint)
	case "SignatureDoesNotMatch":
		return engine.Usagef("s3: %s refused the secret key: it does not match the access key (SignatureDoesNotMatch)", c.endpoint)
	case "AccessDenied":
		return engine.Usagef("s3: %s denied access to bucket %s (AccessDenied): wrong keys, or another user's bucket", c.endpoint, bucket)
	default:
		return engine.Usagef("s3: %s %s on %s: %v", what, bucket, c.endpoint, err)
	}
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = ue.Err.Error() // the URL is the endpoint's, already named
	}
	hint := ""
	if cv := (*tls.CertificateVerificationError)(nil); errors.As(err, &cv) {
		hint = " (--insecure, or insecure=true in the target, skips certificate verification)"
	}
	return engine.Usagef("s3: cannot reach %s: %s%s", c.endpoint, msg, hint)
}

func (c *client) close() { c.transport.CloseIdleConnections() }

// code is err's S3 error code, or "" when the service did not answer.
func code(err error) string {
	var r minio.ErrorResponse
	var re *RequestError
	switch {
	case errors.As(err, &r):
		return r.Code
	case errors.As(err, &re):
		return re.Code
	}
	return ""
}

// RequestError is a request the service answered with an error: its S3
// error code (NoSuchKey, SlowDown, AccessDenied...) and HTTP status. A
// missing object or bucket reads as fs.ErrNotExist.
type RequestError struct {
	// Op is the request (GET, PUT, DELETE, HEAD, LIST) and Key its object.
	Op, Key string
	Code    string
	Status  int
	Message string
}

// Error names the request, the key and the service's message and code.
func (e *RequestError) Error() string {
	return fmt.Sprintf("s3: %s %s: %s (%s)", e.Op, e.Key, e.Message, e.Code)
}

// Is makes a 404 match fs.ErrNotExist.
func (e *RequestError) Is(target error) bool {
	return target == fs.ErrNotExist && e.Status == http.StatusNotFound
}

// opError wraps a measured request's failure: a *RequestError when the
// service answered, else the transport's error with the key.
func opError(op, key string, err error) error {
	var r minio.ErrorResponse
	if errors.As(err, &r) {
		return &RequestError{Op: op, Key: key, Code: r.Code, Status: r.StatusCode, Message: r.Error()}
	}
	return fmt.Errorf("s3: %s %s: %w", op, key, err)
}
