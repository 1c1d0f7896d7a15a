package bridge

// KindForbidden: the caller is known, but this request may not do what it
// asks (a form from another site, a wrong one-time code). It follows the
// kinds of error.go; a transport's table of kinds refuses to compile should
// another kind ever take its value.
const KindForbidden = KindInsufficientStorage + 1
