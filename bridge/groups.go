package bridge

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Group administration: the account creating groups, changing their info
// and members, and what WhatsApp reports of the changes others make.

// MemberAction is a change of group members an admin makes.
type MemberAction string

// The member actions.
const (
	MemberAdd     MemberAction = "add"
	MemberRemove  MemberAction = "remove"
	MemberPromote MemberAction = "promote"
	MemberDemote  MemberAction = "demote"
)

// ParseMemberAction accepts the actions as the API spells them.
func ParseMemberAction(s string) (MemberAction, error) {
	switch a := MemberAction(s); a {
	case MemberAdd, MemberRemove, MemberPromote, MemberDemote:
		return a, nil
	}
	return "", Invalid(CodeInvalidAction, "action must be add, remove, promote or demote")
}

// The outcomes of one participant of a member change.
const (
	MemberDone           = "done"
	MemberNotOnWhatsApp  = "not_on_whatsapp" // no such account (or, not add, not in the group)
	MemberPrivacyRefused = "privacy_refused" // only an invitation may bring them in
	MemberAlreadyIn      = "already_member"  // add of someone in the group
	MemberNotAllowed     = "not_allowed"     // the owner cannot be removed or demoted
	MemberRefused        = "refused"         // another code WhatsApp gave
	MemberNotInGroup     = "not_member"      // remove, promote, demote of someone not in it
)

// Bounds of group administration.
const (
	maxGroupSubjectRunes = 100  // WhatsApp's apps stop at 100 characters
	maxDescriptionRunes  = 2048 // and at 2,048 for a description
	MaxMembersPerAction  = 5    // participants one request may change (see GroupActionBurst)
	maxInviteCodeLen     = 64   // WhatsApp's codes are 22-24 characters
	inviteLinkPrefix     = "https://chat.whatsapp.com/"
)

// GroupActionBurst is how many group actions may run at once before the
// pace (GROUP_ACTION_RATE) spaces them: an action costs one token per
// participant it names (at least one), so a request may name at most this
// many.
const GroupActionBurst = MaxMembersPerAction

// MemberResult is what became of one participant of a member change.
type MemberResult struct {
	// Participant is as the request named them (number or LID JID).
	Participant Recipient
	Outcome     string
	// Phone and LID are what WhatsApp answered, when it did.
	Phone, LID string
}

// GroupMember is a participant of a group, with both addresses when
// known: Phone (digits) and LID (its JID).
type GroupMember struct {
	Phone, LID        string
	Admin, SuperAdmin bool
}

// GroupInfo is a group as WhatsApp describes it.
type GroupInfo struct {
	ID          string // the group's JID
	Subject     string
	Description string
	Owner       string // the creator's number or LID JID; empty when unknown
	Created     time.Time
	Announce    bool // only admins may send
	Locked      bool // only admins may change the info
	Members     []GroupMember
}

// GroupChange is what WhatsApp reported of a group: a member change, or a
// change of its info. Nil and empty fields did not change.
type GroupChange struct {
	Group Recipient
	// By is who made the change (number or LID JID); zero when WhatsApp
	// did not say (a change by the server).
	By Recipient
	At time.Time
	// MemberAction with Members: who joined (add), left or was removed
	// (remove), was promoted or demoted.
	MemberAction MemberAction
	Members      []GroupMember
	// Reason of a join or leave: "invite" (by link), "leave"... as given.
	Reason      string
	Subject     *string
	Description *string
	Announce    *bool
	Locked      *bool
	// Photo is "set" or "removed" when the photo changed.
	Photo string
	// InviteReset: the invite link was revoked and replaced.
	InviteReset bool
	// Created: the account was added to a new group (Subject is its name).
	Created bool
}

// The errors of group administration.
var (
	ErrNotGroupAdmin = Errorf(KindForbidden, CodeNotGroupAdmin,
		"only an admin of the group may do this, and the account is not one")
	ErrNotGroupMember = Errorf(KindForbidden, CodeNotGroupMember, "the account is not a member of the group")
	ErrUnknownGroup   = Errorf(KindNotFound, CodeUnknownGroup, "WhatsApp knows no such group")
	ErrInviteRevoked  = Errorf(KindNotFound, CodeInviteLinkRevoked, "the invite link was revoked")
	ErrInviteUnknown  = Errorf(KindNotFound, CodeInviteLinkUnknown, "WhatsApp knows no group with this invite link")
	ErrPhotoRefused   = Invalid(CodeInvalidPhoto, "WhatsApp refused the photo: it takes a JPEG image")
	ErrGroupRefused   = Errorf(KindUpstream, CodeGroupActionRefused, "WhatsApp refused the group action")
)

// ParseGroupSubject accepts a group's name: 1-100 characters, no control
// characters, not only spaces.
func ParseGroupSubject(s string) (string, error) {
	if strings.TrimSpace(s) == "" || utf8.RuneCountInString(s) > maxGroupSubjectRunes || !printable(s, false) {
		return "", Invalid(CodeInvalidSubject, "subject must be 1-100 characters without control characters")
	}
	return s, nil
}

// ParseGroupDescription accepts a group's description: up to 2,048
// characters (line breaks allowed); "" removes it.
func ParseGroupDescription(s string) (string, error) {
	if utf8.RuneCountInString(s) > maxDescriptionRunes || !printable(s, true) {
		return "", Invalid(CodeInvalidDescription, "description must be at most 2048 characters without control characters other than line breaks")
	}
	return s, nil
}

// printable reports valid UTF-8 without control characters (but line
// breaks and tabs when multiline).
func printable(s string, multiline bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		lineBreak := r == '\n' || r == '\r' || r == '\t'
		if unicode.IsControl(r) && (!multiline || !lineBreak) {
			return false
		}
	}
	return true
}

// ParseInviteLink accepts an invite link, https://chat.whatsapp.com/<code>,
// or its bare code (letters and digits), and returns the code.
func ParseInviteLink(s string) (string, error) {
	code := strings.TrimPrefix(s, inviteLinkPrefix)
	if code == "" || len(code) > maxInviteCodeLen {
		return "", errInviteLink
	}
	for _, c := range code {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return "", errInviteLink
		}
	}
	return code, nil
}

var errInviteLink = Invalid(CodeInvalidInviteLink, "link must be https://chat.whatsapp.com/<code> or the code alone")

// InviteLink is the link of an invite code.
func InviteLink(code string) string { return inviteLinkPrefix + code }

// ParseParticipants accepts the people a group action names: 1 to
// MaxMembersPerAction phone numbers or LID JIDs, each once.
func ParseParticipants(in []string) ([]Recipient, error) {
	if len(in) == 0 {
		return nil, Invalid(CodeMissingParticipants, `"participants" must name at least one phone number or LID`)
	}
	if len(in) > MaxMembersPerAction {
		return nil, Invalid(CodeTooManyParticipants,
			"at most %d participants per request: WhatsApp bans accounts that add many people at once", MaxMembersPerAction)
	}
	out := make([]Recipient, 0, len(in))
	seen := map[string]bool{}
	for _, s := range in {
		r, err := ParseRecipient(s)
		if err != nil || r.Kind == RecipientGroup {
			return nil, Invalid(CodeInvalidParticipant, "%q is not a phone number with country code or a LID (<digits>@lid)", truncate(s, 40))
		}
		if seen[r.JID()] {
			return nil, Invalid(CodeDuplicateParticipant, "%s is named twice", r)
		}
		seen[r.JID()] = true
		out = append(out, r)
	}
	return out, nil
}

// truncate keeps error messages short whatever a caller sent.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
