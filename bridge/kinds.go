package bridge

// Part is the content a message type requires besides its text.
type Part string

// The parts; each names the field a message lacking it misses.
const (
	PartNone     Part = ""
	PartFile     Part = "file"     // an attachment: image, document, video, audio
	PartLocation Part = "location" // a place
	PartContact  Part = "vcard"    // a contact card
	PartTarget   Part = "target"   // the earlier message an action acts on
	PartPoll     Part = "poll"     // a question and its options
	PartButtons  Part = "buttons"  // reply buttons
)

// MissingCode is the error code of a message whose type requires p but
// which lacks it: missing_file, missing_location, missing_vcard,
// missing_target, missing_poll, missing_buttons.
func (p Part) MissingCode() string { return "missing_" + string(p) }

// MessageKind is what one message type carries and requires: the one
// table every door, the queue and the link read instead of each keeping
// its own switch.
type MessageKind struct {
	// Part is the content the type requires besides its text.
	Part Part
	// Text: the type takes a text (a text's body, a media caption, an
	// edit's new text); a text on any other type is refused.
	Text bool
	// Action: the type acts on an earlier message (its target) instead of
	// carrying content of its own.
	Action bool
}

// messageKinds holds every outgoing type of MessageTypes.
var messageKinds = map[MessageType]MessageKind{
	TypeText:     {Text: true},
	TypeImage:    {Part: PartFile, Text: true},
	TypeDocument: {Part: PartFile, Text: true},
	TypeVideo:    {Part: PartFile, Text: true},
	TypeAudio:    {Part: PartFile},
	TypeLocation: {Part: PartLocation},
	TypeContact:  {Part: PartContact},
	TypeReaction: {Part: PartTarget, Action: true},
	TypeEdit:     {Part: PartTarget, Text: true, Action: true},
	TypeRevoke:   {Part: PartTarget, Action: true},
	TypePoll:     {Part: PartPoll},
	TypeButtons:  {Part: PartButtons, Text: true},
}

// Kind is what t carries and requires; ok is false for a type the bridge
// does not know.
func (t MessageType) Kind() (k MessageKind, ok bool) {
	k, ok = messageKinds[t]
	return k, ok
}

// CarriesFile tells whether t is sent with an attachment.
func (t MessageType) CarriesFile() bool { return messageKinds[t].Part == PartFile }

// IsAction tells whether t acts on an earlier message instead of carrying
// content of its own.
func (t MessageType) IsAction() bool { return messageKinds[t].Action }
