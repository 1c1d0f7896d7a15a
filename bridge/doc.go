// Package bridge is the bridge's domain: the words every part of the bridge
// shares and nothing else. A recipient, a message and the order of its
// statuses, an incoming message, a receipt, the session's status, and the
// one application error type. It does no I/O and imports no other part of
// the bridge; the adapters in its sub-packages (whatsapp, sqlite, httpapi,
// sendqueue, webhook, …) speak it to each other.
package bridge
