package inpod

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// API is how a pod reaches the API server.
type API struct {
	// URL is the server's base URL (https://HOST:PORT).
	URL string
	// Client makes the requests; it trusts the cluster's CA.
	Client *http.Client
	// Token is the bearer token of each request, read anew each time:
	// a pod's service account token is rotated under it.
	Token func() (string, error)
}

// The service account's files in every pod that mounts its token.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// InCluster is the API server as the pod's service account reaches it,
// and the pod's namespace.
func InCluster() (API, string, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return API{}, "", errors.New("not in a Kubernetes pod: KUBERNETES_SERVICE_HOST and _PORT are not set")
	}
	ca, err := os.ReadFile(serviceAccountDir + "/ca.crt")
	if err != nil {
		return API{}, "", fmt.Errorf("the service account's CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return API{}, "", errors.New("the service account's ca.crt holds no certificate")
	}
	ns, err := os.ReadFile(serviceAccountDir + "/namespace")
	if err != nil {
		return API{}, "", fmt.Errorf("the pod's namespace: %w", err)
	}
	token := func() (string, error) {
		b, err := os.ReadFile(serviceAccountDir + "/token")
		return strings.TrimSpace(string(b)), err
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	return API{URL: "https://" + net.JoinHostPort(host, port), Client: client, Token: token}, strings.TrimSpace(string(ns)), nil
}

// configMap is what the agent reads of a ConfigMap.
type configMap struct {
	Metadata struct {
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Data map[string]string `json:"data"`
}

// watchEvent is one event of a watch: its object is a ConfigMap, or for
// an ERROR a Status.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// errGone says the watch's resource version is too old to resume from.
var errGone = errors.New("resource version gone")

// retries is how long the API server may be out of reach before the
// agent takes the coordinator for lost.
const retries = 30 * time.Second

// Follow feeds in the ConfigMap name of namespace as it changes, until
// ctx ends or the ConfigMap is deleted (then in ends with io.EOF). A
// watch the server ends is resumed from the last version seen, or after
// a fresh read when that version is gone; when the server cannot be
// reached for 30 s, in ends with the error.
func Follow(ctx context.Context, api API, namespace, name string, in *Input) {
	base := api.URL + "/api/v1/namespaces/" + url.PathEscape(namespace) + "/configmaps"
	version := ""
	failingSince := time.Time{}
	for ctx.Err() == nil {
		var err error
		if version == "" {
			version, err = readConfigMap(ctx, api, base+"/"+url.PathEscape(name), in)
		}
		if err == nil && version != "" {
			version, err = watchConfigMap(ctx, api, base, name, version, in)
		}
		switch {
		case errors.Is(err, io.EOF): // deleted
			in.End(io.EOF)
			return
		case errors.Is(err, errGone):
			version = ""
			continue
		case err == nil:
			failingSince = time.Time{}
			continue
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		} else if time.Since(failingSince) > retries {
			in.End(fmt.Errorf("following ConfigMap %s: %w", name, err))
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
	in.End(ctx.Err())
}

// readConfigMap reads the ConfigMap at u into in and returns its version;
// io.EOF when it does not exist.
func readConfigMap(ctx context.Context, api API, u string, in *Input) (string, error) {
	resp, err := get(ctx, api, u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var cm configMap
	if err := json.NewDecoder(resp.Body).Decode(&cm); err != nil {
		return "", fmt.Errorf("reading the ConfigMap: %w", err)
	}
	in.Update(cm.Data)
	return cm.Metadata.ResourceVersion, nil
}

// watchConfigMap follows the ConfigMap name from version on until the
// server ends the watch, and returns the last version seen; io.EOF when
// the ConfigMap was deleted, errGone when version is too old.
func watchConfigMap(ctx context.Context, api API, base, name, version string, in *Input) (string, error) {
	q := url.Values{"watch": {"true"}, "fieldSelector": {"metadata.name=" + name}, "resourceVersion": {version}, "allowWatchBookmarks": {"true"}}
	resp, err := get(ctx, api, base+"?"+q.Encode())
	if err != nil {
		return version, err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev watchEvent
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return version, nil // the server ended the watch: resume it
			}
			return version, fmt.Errorf("reading the watch: %w", err)
		}
		switch ev.Type {
		case "DELETED":
			return version, io.EOF
		case "ERROR":
			var status struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			json.Unmarshal(ev.Object, &status) // a status without a code is retried
			if status.Code == http.StatusGone {
				return "", errGone
			}
			return version, fmt.Errorf("the watch failed: %s", status.Message)
		}
		var cm configMap
		if err := json.Unmarshal(ev.Object, &cm); err != nil {
			return version, fmt.Errorf("a %s event: %w", ev.Type, err)
		}
		if ev.Type != "BOOKMARK" {
			in.Update(cm.Data)
		}
		version = cm.Metadata.ResourceVersion
	}
}

// get sends a GET with the service account's token; io.EOF for 404, errGone for 410.
func get(ctx context.Context, api API, u string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	token, err := api.Token()
	if err != nil {
		return nil, fmt.Errorf("the service account's token: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	resp, err := api.Client.Do(req)
	if err != nil {
		return nil, err
	}
	switch resp.StatusCode {
	case http.StatusOK:
		return resp, nil
	case http.StatusNotFound:
		resp.Body.Close()
		return nil, io.EOF
	case http.StatusGone:
		resp.Body.Close()
		return nil, errGone
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	resp.Body.Close()
	return nil, fmt.Errorf("GET %s: %s: %s", req.URL.Path, resp.Status, strings.TrimSpace(string(body)))
}
