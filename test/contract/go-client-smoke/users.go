package main

import (
	"context"
	"fmt"
	"math/rand"

	pvai "pvai.local/generated/go-client"
)

// smokeUserData gives an end user a corrected memory, a deleted one and a document, then reads their export
// through the client's strict models (a field the contract does not declare fails the decoding), erases them, and
// reads the empty export and the zero counts of a second erase.
func smokeUserData(ctx context.Context, api *pvai.APIClient) {
	user := fmt.Sprintf("go-smoke-%08x", rand.Uint32())
	remember := func(content string) string {
		memory, _, err := api.MemoryAPI.CreateMemory(ctx).MemoryCreateRequest(*pvai.NewMemoryCreateRequest(user, content)).Execute()
		if err != nil {
			fail("CreateMemory: %v", err)
		}
		return memory.GetId()
	}
	corrected := remember("Lives in Lyon.")
	change := pvai.NewMemoryUpdateRequest()
	change.SetContent("Lives in Paris.")
	if _, _, err := api.MemoryAPI.UpdateMemory(ctx, corrected).UserId(user).MemoryUpdateRequest(*change).Execute(); err != nil {
		fail("UpdateMemory: %v", err)
	}
	deleted := remember("Collects stamps.")
	if _, _, err := api.MemoryAPI.DeleteMemory(ctx, deleted).UserId(user).Execute(); err != nil {
		fail("DeleteMemory: %v", err)
	}
	document := pvai.NewDocumentCreateRequest(user, "The harbour gate code is 7431.")
	if _, _, err := api.RAGAPI.CreateDocument(ctx).DocumentCreateRequest(*document).Execute(); err != nil {
		fail("CreateDocument: %v", err)
	}

	export, _, err := api.UsersAPI.ExportUserData(ctx, user).Execute()
	if err != nil {
		fail("ExportUserData: %v", err)
	}
	var current, gone int
	for _, m := range export.GetMemories() {
		if m.HasMemory() {
			current++
		} else if m.GetMemoryId() == deleted && len(m.GetHistory()) == 2 {
			gone++
		}
	}
	docs := export.GetDocuments()
	if current != 1 || gone != 1 || len(docs) != 1 || docs[0].GetText() != "The harbour gate code is 7431." ||
		len(export.GetUsage()) < 5 {
		fail("ExportUserData: %d memories, %d deleted, %d documents, %d usage rows", current, gone, len(docs),
			len(export.GetUsage()))
	}
	ok("ExportUserData: 1 memory, 1 deleted with its history, 1 document with its text, %d usage rows",
		len(export.GetUsage()))

	erasure, _, err := api.UsersAPI.EraseUserData(ctx, user).Execute()
	if err != nil {
		fail("EraseUserData: %v", err)
	}
	erased := erasure.GetErased()
	if erased.GetMemories() != 1 || erased.GetDocuments() != 1 || erased.GetUsage() != int64(len(export.GetUsage())) {
		fail("EraseUserData: erased %+v", erased)
	}
	again, _, err := api.UsersAPI.ExportUserData(ctx, user).Execute()
	if err != nil || len(again.GetMemories())+len(again.GetDocuments())+len(again.GetUsage()) != 0 {
		fail("ExportUserData after the erase: %v (%v)", again, err)
	}
	second, _, err := api.UsersAPI.EraseUserData(ctx, user).Execute()
	if err != nil {
		fail("EraseUserData again: %v", err)
	}
	if zeros := second.GetErased(); zeros.GetMemories()+zeros.GetDocuments()+zeros.GetUsage() != 0 {
		fail("EraseUserData again: erased %+v", zeros)
	}
	ok("EraseUserData: 1 memory, 1 document, %d usage rows kept without the user; then an empty export, and zeros",
		erased.GetUsage())
}
