package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// streamWriter is one agent's stdin as the coordinator writes it: its key
// of the run's ConfigMap, to which each write is appended.
type streamWriter struct {
	ctx        context.Context
	configMaps corev1client.ConfigMapInterface
	name, key  string

	mu   sync.Mutex
	held []byte // what the key holds
}

// Write appends p to the key. It is safe for concurrent use.
func (w *streamWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	held := append(bytes.Clone(w.held), p...)
	patch, err := json.Marshal(map[string]any{"data": map[string]string{w.key: string(held)}})
	if err != nil {
		return 0, err
	}
	// A merge patch of one key: the other agents' keys, patched at the
	// same time, are left as they are.
	if _, err := w.configMaps.Patch(w.ctx, w.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return 0, fmt.Errorf("writing to ConfigMap %s: %w", w.name, err)
	}
	w.held = held
	return len(p), nil
}

// Close does nothing: the agents' input ends when the run's ConfigMap is
// deleted, with the rest of the run.
func (w *streamWriter) Close() error { return nil }
