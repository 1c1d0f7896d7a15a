package controllers

import (
	"context"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Secrets are the one kind whose cache would grow with the cluster, not with
// the bridges: a typed informer holds every Secret's data, so a cluster with
// a few hundred MB of unrelated Secrets would OOM-kill the operator. The
// operator therefore watches Secrets metadata-only (about 1 KB each) and
// keeps the data of only the Secrets its bridges read, keyed by resource
// version: a round reads a Secret from the API server only when its version
// moved since the last read.
//
// Rule: nothing in this package reads a typed corev1.Secret through the
// manager's client, which would start the cache-everything informer.

// secretStore holds the data of the Secrets the bridges read.
type secretStore struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]storedSecret
}

type storedSecret struct {
	resourceVersion string
	data            map[string][]byte
}

func (s *secretStore) get(key types.NamespacedName, resourceVersion string) (map[string][]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	if !ok || e.resourceVersion != resourceVersion {
		return nil, false
	}
	return e.data, true
}

func (s *secretStore) put(key types.NamespacedName, resourceVersion string, data map[string][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = map[types.NamespacedName]storedSecret{}
	}
	s.entries[key] = storedSecret{resourceVersion: resourceVersion, data: maps.Clone(data)}
}

func (s *secretStore) forget(key types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries, key)
}

// secretMetadata reads a Secret's metadata from the metadata-only cache.
func (r *MessagingBridgeReconciler) secretMetadata(ctx context.Context, key types.NamespacedName) (*metav1.PartialObjectMetadata, error) {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	if err := r.Get(ctx, key, m); err != nil {
		if apierrors.IsNotFound(err) {
			r.secrets.forget(key)
		}
		return nil, err
	}
	return m, nil
}

// readSecret returns a Secret with its data: the metadata from the cache,
// the data from the store when the version matches, else from the API
// server. The returned data must not be modified.
func (r *MessagingBridgeReconciler) readSecret(ctx context.Context, key types.NamespacedName) (*corev1.Secret, error) {
	m, err := r.secretMetadata(ctx, key)
	if err != nil {
		return nil, err
	}
	if data, ok := r.secrets.get(key, m.ResourceVersion); ok {
		return &corev1.Secret{ObjectMeta: m.ObjectMeta, Data: data}, nil
	}
	var secret corev1.Secret
	if err := r.apiReader().Get(ctx, key, &secret); err != nil {
		if apierrors.IsNotFound(err) {
			r.secrets.forget(key)
		}
		return nil, err
	}
	r.secrets.put(key, secret.ResourceVersion, secret.Data)
	return &secret, nil
}

func (r *MessagingBridgeReconciler) apiReader() client.Reader {
	if r.APIReader != nil {
		return r.APIReader
	}
	return r.Client
}
