package bridge

import "time"

// BlockChange is a contact the account blocked or unblocked
// (contact.blocked): through the API, or on the account's phone.
type BlockChange struct {
	// Contact names the contact: its phone number when known, else its
	// LID; ContactLID and ContactPhone are each set when known.
	Contact, ContactLID, ContactPhone Recipient
	Blocked                           bool
	// By is where the change was made: BlockedByAPI or BlockedByPhone.
	By string
	At time.Time
}

// Where a block or unblock was made.
const (
	BlockedByAPI   = "api"
	BlockedByPhone = "phone"
)

// BlockedContact is an entry of the account's block list.
type BlockedContact struct {
	Contact, ContactLID, ContactPhone Recipient
}

// ContactProfile is what WhatsApp shows of a contact: its about text, its
// profile picture and, for a business, its business profile.
type ContactProfile struct {
	Contact Recipient
	// About is the contact's about text; empty when none is set or the
	// contact's privacy settings hide it.
	About string
	// PictureID and PictureURL name the profile picture; empty when none is
	// set, or PictureHidden when the contact's privacy hides it.
	PictureID, PictureURL string
	PictureHidden         bool
	// Business is set for a business account.
	Business *BusinessProfile
	// FetchedAt is when WhatsApp was asked (answers are cached).
	FetchedAt time.Time
}

// BusinessProfile is a business account's public profile.
type BusinessProfile struct {
	VerifiedName string
	Email        string
	Address      string
	Categories   []string
}

// ErrContactBlocked refuses a send to a contact the account blocked.
var ErrContactBlocked = &Error{Kind: KindConflict, Code: CodeContactBlocked,
	Message: "the recipient is on the account's block list; unblock it (DELETE /api/contacts/{id}/block) before sending to it"}

// OwnProfile is the account's own profile: its push name (set on the
// phone), about text and profile picture.
type OwnProfile struct {
	PushName string
	ContactProfile
}

// PrivacySettings are the account's privacy settings, by WhatsApp's names
// (groupadd, last, status, profile, readreceipts, online, calladd,
// messages, …) with WhatsApp's values (all, contacts, contact_blacklist,
// none, match_last_seen, known, …).
type PrivacySettings map[string]string

// MaxAboutLength is the longest about text WhatsApp takes, in characters.
const MaxAboutLength = 139

// ErrInvalidPicture refuses a profile picture WhatsApp does not take.
var ErrInvalidPicture = &Error{Kind: KindInvalid, Code: CodeInvalidPicture,
	Message: "picture must be a JPEG image, base64-encoded, of at most 2 MiB"}
