package controllers

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
	"github.com/msgbridge/msgbridge/controllers/conditions"
	"github.com/msgbridge/msgbridge/controllers/specs"
)

// secretBytes counts the bytes of Secret data the operator receives: the
// bodies of requests on a secrets path, except metadata-only ones.
type secretBytes struct {
	next http.RoundTripper
	full atomic.Int64
}

func (s *secretBytes) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(req)
	if err != nil || !strings.Contains(req.URL.Path, "/secrets") || strings.Contains(req.Header.Get("Accept"), "as=PartialObjectMetadata") {
		return resp, err
	}
	resp.Body = &countingBody{ReadCloser: resp.Body, n: &s.full}
	return resp, nil
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// Issue 18.3: unrelated Secrets are never loaded whole; the operator caches
// Secrets metadata-only and reads only those its bridges use. Here 3 MB of
// unrelated Secrets sit beside one bridge whose credentials are a few
// hundred bytes; a typed Secret informer would receive all 3 MB.
func TestUnrelatedSecretsAreNotCached(t *testing.T) {
	ns := testNamespace(t)
	for _, name := range []string{"blob-a", "blob-b", "blob-c"} {
		create(t, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Data:       map[string][]byte{"blob": bytes.Repeat([]byte{'x'}, 900<<10)},
		})
	}
	counter := &secretBytes{}
	cfg := rest.CopyConfig(restConfig)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
	startOperator(t, ns, operatorOptions{config: cfg})

	mb := newBridgeWithKeys(t, ns, "sales")
	create(t, mb)
	waitCondition(t, mb, msgbridgev1alpha1.ConditionReconciled, metav1.ConditionTrue, conditions.ReasonReconciled)
	// A rotation is read too.
	before := waitStatefulSet(t, mb, anyStatefulSet).Spec.Template.Annotations[specs.SecretsHashAnnotation]
	setSecretKey(t, ns, "sales-keys", "apiKey", "api-key-rotated-0123456789")
	waitStatefulSet(t, mb, func(sts *appsv1.StatefulSet) (bool, string) {
		return sts.Spec.Template.Annotations[specs.SecretsHashAnnotation] != before, "the rotation did not reach the StatefulSet"
	})

	if got := counter.full.Load(); got > 256<<10 {
		t.Errorf("the operator received %d KiB of Secrets; the 2.7 MiB of unrelated ones must not reach it", got>>10)
	}
}
