package bridge

// Secret is a credential. It formats as "[redacted]" so that printing a
// value that holds one (the settings, a request's options), by mistake or in
// a debug line, never leaks it.
type Secret string

// String hides the secret from fmt and loggers.
func (Secret) String() string { return "[redacted]" }

// GoString hides the secret from %#v.
func (Secret) GoString() string { return `"[redacted]"` }

// MarshalLog hides the secret from logr sinks (it implements logr.Marshaler;
// the domain package does not import logr for it).
func (Secret) MarshalLog() any { return "[redacted]" }

// Reveal returns the secret itself, for the one place that needs it.
func (s Secret) Reveal() string { return string(s) }
