//go:build ceph

package cephtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// RGW connects to the test run's radosgw, or skips the test:
// scripts/test.sh starts its sandbox with --rgw and exports AWS_*.
func RGW(t *testing.T) *minio.Client {
	t.Helper()
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	if endpoint == "" {
		t.Skip("no radosgw: AWS_ENDPOINT_URL is unset (scripts/test.sh starts a sandbox with --rgw and sets it)")
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	c, err := minio.New(u.Host, &minio.Options{
		Creds:  credentials.NewStaticV4(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), ""),
		Secure: u.Scheme == "https", BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Bucket is a fresh bucket name starting with prefix; the bucket, if
// anything creates it, is removed with what it holds when the test ends.
func Bucket(t *testing.T, c *minio.Client, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", prefix, rand.Uint32())
	t.Cleanup(func() {
		ctx := context.Background()
		if ok, _ := c.BucketExists(ctx, name); !ok {
			return
		}
		for obj := range c.ListObjects(ctx, name, minio.ListObjectsOptions{Recursive: true}) {
			if obj.Err == nil {
				_ = c.RemoveObject(ctx, name, obj.Key, minio.RemoveObjectOptions{})
			}
		}
		if err := c.RemoveBucket(ctx, name); err != nil {
			t.Errorf("removing bucket %s: %v", name, err)
		}
	})
	return name
}
