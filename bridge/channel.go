package bridge

import (
	"strings"
	"time"
)

// Channel is a WhatsApp channel (a newsletter): one account posts, the
// accounts that follow it read. Its JID is <digits>@newsletter.
type Channel struct {
	JID         string
	Name        string
	Description string
	// Invite is the code of its link, https://whatsapp.com/channel/<code>.
	Invite    string
	Followers int
	Created   time.Time
	// Role is the account's part in it: owner, admin, subscriber or
	// guest (a channel read by invite without following it).
	Role     string
	Muted    bool
	Verified bool
}

// ChannelPost is a post of a channel: read from its recent posts, or
// received (channel.post) by an account that follows it.
type ChannelPost struct {
	Channel string // the channel's JID
	// ServerID numbers the channel's posts in order; WhatsAppID is the
	// poster's message id.
	ServerID   int64
	WhatsAppID string
	Type       string // a message type (text, image, …); "" when unknown
	Text       string // the text, or a media post's caption
	Timestamp  time.Time
	Views      int
	Reactions  map[string]int
}

// The channel roles.
const (
	ChannelOwner      = "owner"
	ChannelAdmin      = "admin"
	ChannelSubscriber = "subscriber"
	ChannelGuest      = "guest"
)

// CanPost reports whether the account posts in the channel (owner, admin).
func (c Channel) CanPost() bool { return c.Role == ChannelOwner || c.Role == ChannelAdmin }

const (
	channelServer       = "@newsletter"
	channelLinkPrefix   = "https://whatsapp.com/channel/"
	maxChannelInviteLen = 64
	// MaxChannelPosts bounds the posts one read asks WhatsApp for.
	MaxChannelPosts = 100
)

// ChannelLink is the link of a channel's invite code.
func ChannelLink(code string) string {
	if code == "" {
		return ""
	}
	return channelLinkPrefix + code
}

// ParseChannelInvite accepts a channel's link, https://whatsapp.com/channel/<code>
// (also with www. or without the scheme), or the code alone.
func ParseChannelInvite(s string) (string, error) {
	code := strings.TrimSpace(s)
	for _, prefix := range []string{"https://", "http://", "www."} {
		code = strings.TrimPrefix(code, prefix)
	}
	code = strings.TrimPrefix(code, "whatsapp.com/channel/")
	if code == "" || len(code) > maxChannelInviteLen {
		return "", errChannelInvite
	}
	for _, c := range code {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			return "", errChannelInvite
		}
	}
	return code, nil
}

var errChannelInvite = Invalid(CodeInvalidChannelInvite, "invite must be https://whatsapp.com/channel/<code> or the code alone")

// ErrInvalidChannel names the form of a channel's JID.
var ErrInvalidChannel = Invalid(CodeInvalidChannel, "the path must name a channel: <digits>@newsletter")

// ParseChannel accepts a channel's JID, <digits>@newsletter.
func ParseChannel(s string) (Recipient, error) {
	r, err := ParseRecipient(s)
	if err != nil || r.Kind != RecipientChannel {
		return Recipient{}, ErrInvalidChannel
	}
	return r, nil
}

// ErrChannelNotFound: WhatsApp knows no such channel (or invite).
var ErrChannelNotFound = Errorf(KindNotFound, CodeChannelNotFound, "WhatsApp knows no channel with this JID or invite")
