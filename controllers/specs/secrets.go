package specs

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	msgbridgev1alpha1 "github.com/msgbridge/msgbridge/api/v1alpha1"
)

// GeneratedSecretData is the data the generated Secret must hold: every key
// it already has, unchanged, plus a fresh value for each credential mb needs
// generated and lacks. added lists the new keys; none means nothing to write.
//
// Keys are never dropped, even when mb stops needing them: a user who points
// encryptionKeySecretRef at their own Secret and later removes the reference
// must get the old encryption key back, or the bridge's databases are lost.
func GeneratedSecretData(mb *msgbridgev1alpha1.MessagingBridge, existing map[string][]byte, random io.Reader) (data map[string][]byte, added []string, err error) {
	data = maps.Clone(existing)
	if data == nil {
		data = map[string][]byte{}
	}
	for _, c := range Credentials(mb) {
		if !c.Generated {
			continue
		}
		if _, ok := data[c.Source.Key]; ok {
			continue
		}
		value, err := generators[c.Source.Key](random)
		if err != nil {
			return nil, nil, err
		}
		data[c.Source.Key] = []byte(value)
		added = append(added, c.Source.Key)
	}
	return data, added, nil
}

// NeedsGeneratedSecret reports whether any credential of mb is generated.
func NeedsGeneratedSecret(mb *msgbridgev1alpha1.MessagingBridge) bool {
	return slices.ContainsFunc(Credentials(mb), func(c Credential) bool { return c.Generated })
}

// GeneratedSecret is the generated Secret to create, for mb. It is created
// once and afterwards only gains keys (see GeneratedSecretData); it is never
// applied whole, so a stale read can never replace a key that already
// encrypts a bridge's data. mb owns it only when mb's deletion deletes it
// (see GeneratedSecretOwners).
func GeneratedSecret(mb *msgbridgev1alpha1.MessagingBridge, data map[string][]byte) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name:        GeneratedSecretName(mb),
			Namespace:   mb.Namespace,
			Labels:      Labels(mb),
			Annotations: map[string]string{BridgeUIDAnnotation: string(mb.UID)},
		},
		Type: corev1.SecretTypeOpaque,
		Data: data,
	}
	s.OwnerReferences = GeneratedSecretOwners(s, mb)
	return s
}

// SecretsHash digests the credential values the bridge reads, keyed by their
// env names. It goes into a pod template annotation, so that rotating a
// credential changes the template and rolls the pod; only referenced keys
// count, so an unrelated edit of a shared Secret restarts nothing.
func SecretsHash(values map[string][]byte) string {
	h := sha256.New()
	for _, env := range slices.Sorted(maps.Keys(values)) {
		// Length prefixes keep ("AB","C") and ("A","BC") apart.
		writeField(h, []byte(env))
		writeField(h, values[env])
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

func writeField(w io.Writer, b []byte) {
	var n [8]byte
	for i := range n {
		n[i] = byte(uint64(len(b)) >> (8 * i))
	}
	_, _ = w.Write(n[:])
	_, _ = w.Write(b)
}
