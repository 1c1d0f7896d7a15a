package cloudapi

import "net/http"

// sendTypes lists the message types the door takes, for its errors.
const sendTypes = "text, image, video, audio, document, sticker, location, contacts, reaction, interactive or template"

// translate turns a Cloud message into the bridge's own message. A
// linked file is fetched last, once nothing else can refuse the message:
// the message then owns it, until the send takes it or deletes it.
func (d *Door) translate(r *http.Request, m cloudMessage) (apiMessage, error) {
	msg := apiMessage{To: m.To, Type: m.Type}
	if m.Context != nil && m.Context.MessageID != "" {
		msg.ReplyTo = &m.Context.MessageID
	}
	switch m.Type {
	case "text":
		if m.Text == nil {
			return msg, invalidParam("missing_text", "a text message needs text.body")
		}
		msg.Text = m.Text.Body
	case "location":
		if m.Location == nil {
			return msg, invalidParam("missing_location", "a location message needs location")
		}
		msg.Location = m.Location
	case "contacts":
		card, err := vcardOf(m.Contacts.V)
		if err != nil {
			return msg, err
		}
		msg.Type, msg.Contact = "contact", &apiContact{VCard: card}
	case "interactive":
		text, buttons, err := replyButtons(m.Interactive)
		if err != nil {
			return msg, err
		}
		msg.Type, msg.Text, msg.Buttons = "buttons", text, buttons
	case "template":
		text, err := d.renderTemplate(r, m.Template)
		if err != nil {
			return msg, err
		}
		msg.Type, msg.Text = "text", text
	case "image", "video", "audio", "document", "sticker":
		return d.translateMedia(r, m, msg)
	case "":
		return msg, invalidParam("missing_type", "the parameter type is required: "+sendTypes)
	default:
		return msg, invalidParam("unknown_type", "type must be one of "+sendTypes)
	}
	return msg, nil
}

// mediaOf is the media object of a media message's type.
func (m cloudMessage) mediaOf() *cloudMedia {
	switch m.Type {
	case "image":
		return m.Image
	case "video":
		return m.Video
	case "audio":
		return m.Audio
	case "document":
		return m.Document
	case "sticker":
		return m.Sticker
	}
	return nil
}

// translateMedia names the file of a media message: an uploaded media id
// as it is, a link fetched from CLOUD_MEDIA_HOSTS into the spool. A
// sticker goes as an image (the bridge sends no sticker messages): WhatsApp
// shows its WebP as a picture.
func (d *Door) translateMedia(r *http.Request, m cloudMessage, msg apiMessage) (apiMessage, error) {
	media := m.mediaOf()
	switch {
	case media == nil:
		return msg, invalidParam("missing_file", "a "+m.Type+" message needs "+m.Type+".id or "+m.Type+".link")
	case media.ID != "" && media.Link != "":
		return msg, invalidParam("invalid_media", "name the media by id or by link, not both")
	case media.ID == "" && media.Link == "":
		return msg, invalidParam("missing_file", "a "+m.Type+" message needs "+m.Type+".id or "+m.Type+".link")
	}
	if m.Type == "sticker" {
		msg.Type = "image"
	}
	if m.Type != "audio" && m.Type != "sticker" {
		msg.Text = media.Caption
	}
	msg.Media = &apiMedia{UploadID: media.ID, PTT: media.Voice}
	if m.Type == "document" {
		msg.Media.FileName = media.Filename // Typebot uploads a blob, then names it here
	}
	if media.Link == "" {
		return msg, nil
	}
	f, err := d.fetchLink(r, media.Link, media.Filename)
	if err != nil {
		return msg, err
	}
	msg.Media.file = f
	return msg, nil
}
