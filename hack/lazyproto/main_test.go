package main

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"go.mau.fi/whatsmeow/proto/waCommon"
	"go.mau.fi/whatsmeow/proto/waE2E"
)

// The copy's files (rewritten by this command through
// hack/whatsmeow-copy.sh) are not registered when the program starts; the
// first use registers a file and the files it imports, once, even when many
// goroutines use it at the same moment (go test -race), and the result is
// the registry protoc-gen-go's init functions made.
func TestWhatsmeowFilesRegisterAtFirstUse(t *testing.T) {
	const e2e, common = "waE2E/WAWebProtobufsE2E.proto", "waCommon/WACommon.proto"
	for _, path := range []string{e2e, common} {
		if _, err := protoregistry.GlobalFiles.FindFileByPath(path); !errors.Is(err, protoregistry.NotFound) {
			t.Fatalf("%s registered before its first use (%v): start-up pays for it again", path, err)
		}
	}

	msg := &waE2E.Message{
		Conversation:        proto.String("hello"),
		ProtocolMessage:     &waE2E.ProtocolMessage{Key: &waCommon.MessageKey{ID: proto.String("ABC")}},
		ExtendedTextMessage: &waE2E.ExtendedTextMessage{Text: proto.String("quoted")},
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			raw, err := proto.Marshal(msg)
			if err != nil {
				t.Error(err)
				return
			}
			var back waE2E.Message
			if err := proto.Unmarshal(raw, &back); err != nil || !proto.Equal(msg, &back) {
				t.Errorf("round trip: %v, %v", err, &back)
			}
		})
	}
	wg.Wait()

	fd, err := protoregistry.GlobalFiles.FindFileByPath(e2e)
	if err != nil {
		t.Fatalf("%s after its first use: %v", e2e, err)
	}
	imports := fd.Imports()
	for i := range imports.Len() {
		if imp := imports.Get(i); imp.IsPlaceholder() {
			t.Errorf("%s imports %s as a placeholder: its package was not registered first", e2e, imp.Path())
		}
	}
	key := msg.GetProtocolMessage().GetKey().ProtoReflect().Descriptor()
	if key.ParentFile().Path() != common || key.FullName() != protoreflect.FullName("WACommon.MessageKey") {
		t.Errorf("MessageKey's descriptor: %s in %s", key.FullName(), key.ParentFile().Path())
	}
	if got := waE2E.PollType_POLL.String(); got != "POLL" {
		t.Errorf("an enum's name: %q", got)
	}
}

// rewrite turns protoc-gen-go's eager registration into the lazy one, and
// refuses a file that does not have it.
func TestRewrite(t *testing.T) {
	src, err := os.ReadFile("testdata/sample.pb.go.txt")
	if err != nil {
		t.Fatal(err)
	}
	out, err := rewrite(string(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"func file_s_proto_init() { file_s_proto_once.Do(file_s_proto_register) }",
		"func XXX_RegisterProtoFiles() { file_s_proto_init() }",
		"func file_s_proto_register() {\n\tdep.XXX_RegisterProtoFiles()\n\tfile_s_proto_enumTypes = make([]protoimpl.EnumInfo, 1)\n\tfile_s_proto_msgTypes = make([]protoimpl.MessageInfo, 1)\n\tif File_s_proto != nil {",
		"func (x *M) ProtoReflect() protoreflect.Message {\n\tfile_s_proto_init()\n\tmi := &file_s_proto_msgTypes[0]",
		"func (E) Type() protoreflect.EnumType {\n\tfile_s_proto_init()\n",
		"var file_s_proto_msgTypes []protoimpl.MessageInfo\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the rewritten file lacks\n%s\n--- it is:\n%s", want, out)
		}
	}
	for _, unwanted := range []string{"func init()", "func (x *M) GetName() string {\n\tfile_s_proto_init()",
		"func file_s_proto_rawDescGZIP() []byte {\n\tfile_s_proto_init()"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("the rewritten file still has\n%s", unwanted)
		}
	}
	if _, err := rewrite(out); err == nil {
		t.Error("a file without protoc-gen-go's init function was rewritten again")
	}
}
