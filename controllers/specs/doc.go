// Package specs builds the objects that run one MessagingBridge: pure
// functions from the resource (and the few facts read from the cluster, such
// as the current generated Secret) to the desired objects. Nothing here talks
// to the API server, so every builder is tested with tables and golden files.
//
// The StatefulSet and Service are returned as apply configurations: they hold
// only the fields the operator sets, which is what Server-Side Apply must be
// sent, and what ExtractX returns of a live object, so the reconciler can
// compare the two and skip an apply that would change nothing.
package specs
