package main

import (
	"context"
	"fmt"
	"math/rand"
	"strings"

	pvai "pvai.local/generated/go-client"
)

// smokeResponses drives the Responses API through the generated client's strict models (an undocumented field of a
// response, an output item, a usage or an input item list fails the decoding): a response created from input items,
// one continuing it through previous_response_id, GetResponse as created, the input items a page at a time in both
// orders, the end user's export (the response with its input items) and erase (its count), then DeleteResponse and
// the 404s that follow.
func smokeResponses(ctx context.Context, api *pvai.APIClient) {
	user := fmt.Sprintf("go-smoke-responses-%08x", rand.Uint32())
	turns := []string{"My name is Ada.", "I live in Lyon."}
	items := make([]pvai.ResponseInputItem, 0, len(turns))
	for _, text := range turns {
		part := pvai.NewResponseInputItemContentOneOfInner("input_text")
		part.SetText(text)
		parts := []pvai.ResponseInputItemContentOneOfInner{*part}
		item := pvai.NewResponseInputItem()
		item.SetType("message")
		item.SetRole("user")
		item.SetContent(pvai.ArrayOfResponseInputItemContentOneOfInnerAsResponseInputItemContent(&parts))
		items = append(items, *item)
	}
	request := pvai.NewResponseCreateRequest(string(pvai.PV_TURBO), pvai.ArrayOfResponseInputItemAsResponseCreateRequestInput(&items))
	request.SetUserId(user)
	request.SetMaxOutputTokens(16)
	request.SetMetadata(map[string]string{"suite": "go-smoke"})
	request.SetSkipCache(true)
	first, res, err := api.ResponsesAPI.CreateResponse(ctx).ResponseCreateRequest(*request).Execute()
	if err != nil {
		fail("CreateResponse: %v", err)
	}
	usage := first.Usage.Get()
	if !strings.HasPrefix(first.GetId(), "resp_") || first.GetStatus() != "completed" || usage == nil ||
		usage.GetTotalTokens() != usage.GetInputTokens()+usage.GetOutputTokens() || first.GetUserId() != user {
		fail("CreateResponse: %s %s, usage %+v, user %s", first.GetId(), first.GetStatus(), usage, first.GetUserId())
	}
	output := first.GetOutput()
	if len(output) != 1 || output[0].GetType() != "message" || len(output[0].GetContent()) != 1 ||
		output[0].GetContent()[0].GetText() == "" {
		fail("CreateResponse: expected one message with text, got %+v", output)
	}
	ok("CreateResponse: %s %s, %q, %d tokens, X-Credits-Charged %s", first.GetId(), first.GetStatus(),
		output[0].GetContent()[0].GetText(), usage.GetTotalTokens(), res.Header.Get("X-Credits-Charged"))

	question := "Where do I live?"
	next := pvai.NewResponseCreateRequest(string(pvai.PV_TURBO), pvai.StringAsResponseCreateRequestInput(&question))
	next.SetUserId(user)
	next.SetPreviousResponseId(first.GetId())
	next.SetMaxOutputTokens(16)
	second, _, err := api.ResponsesAPI.CreateResponse(ctx).ResponseCreateRequest(*next).Execute()
	if err != nil {
		fail("CreateResponse with previous_response_id: %v", err)
	}
	if second.GetPreviousResponseId() != first.GetId() || second.GetStatus() != "completed" {
		fail("CreateResponse with previous_response_id: %s, previous %s", second.GetStatus(), second.GetPreviousResponseId())
	}
	ok("CreateResponse continuing %s: %s", first.GetId(), second.GetId())

	got, _, err := api.ResponsesAPI.GetResponse(ctx, first.GetId()).Execute()
	if err != nil {
		fail("GetResponse: %v", err)
	}
	if got.GetId() != first.GetId() || len(got.GetOutput()) != 1 || got.GetOutput()[0].GetId() != output[0].GetId() ||
		got.GetMetadata()["suite"] != "go-smoke" {
		fail("GetResponse: not the response as created: %+v", got)
	}
	ok("GetResponse: %s as created (output %s, metadata %v)", got.GetId(), got.GetOutput()[0].GetId(), got.GetMetadata())

	page, _, err := api.ResponsesAPI.ListResponseInputItems(ctx, first.GetId()).Order("asc").Limit(1).Execute()
	if err != nil {
		fail("ListResponseInputItems: %v", err)
	}
	if len(page.GetData()) != 1 || !page.GetHasMore() || page.GetData()[0].GetType() != "message" {
		fail("ListResponseInputItems asc, limit 1: %+v", page)
	}
	rest, _, err := api.ResponsesAPI.ListResponseInputItems(ctx, first.GetId()).Order("asc").After(page.GetLastId()).Execute()
	if err != nil {
		fail("ListResponseInputItems after %s: %v", page.GetLastId(), err)
	}
	newest, _, err := api.ResponsesAPI.ListResponseInputItems(ctx, first.GetId()).Execute()
	if err != nil {
		fail("ListResponseInputItems (desc): %v", err)
	}
	if len(rest.GetData()) != 1 || rest.GetHasMore() || len(newest.GetData()) != 2 ||
		newest.GetData()[0].GetId() != rest.GetData()[0].GetId() || newest.GetData()[1].GetId() != page.GetData()[0].GetId() {
		fail("ListResponseInputItems: asc pages %+v then %+v, desc %+v", page.GetData(), rest.GetData(), newest.GetData())
	}
	ok("ListResponseInputItems: 2 items, asc a page of 1 then after %s, desc newest first", page.GetLastId())

	export, _, err := api.UsersAPI.ExportUserData(ctx, user).Execute()
	if err != nil {
		fail("ExportUserData: %v", err)
	}
	exported := map[string]int{}
	for _, r := range export.GetResponses() {
		exported[r.Response.GetId()] = len(r.GetInputItems())
	}
	if len(exported) != 2 || exported[first.GetId()] != 2 || exported[second.GetId()] != 1 {
		fail("ExportUserData: responses %v, expected %s with 2 input items and %s with 1", exported, first.GetId(), second.GetId())
	}
	ok("ExportUserData: the 2 stored responses with their input items")

	deleted, _, err := api.ResponsesAPI.DeleteResponse(ctx, first.GetId()).Execute()
	if err != nil || !deleted.GetDeleted() || deleted.GetId() != first.GetId() {
		fail("DeleteResponse: %+v (%v)", deleted, err)
	}
	_, res, err = api.ResponsesAPI.GetResponse(ctx, first.GetId()).Execute()
	expectError("GetResponse of a deleted response", err, 404, statusCode(res), "NOT_FOUND")
	_, res, err = api.ResponsesAPI.ListResponseInputItems(ctx, first.GetId()).Execute()
	expectError("ListResponseInputItems of a deleted response", err, 404, statusCode(res), "NOT_FOUND")
	again := pvai.NewResponseCreateRequest(string(pvai.PV_TURBO), pvai.StringAsResponseCreateRequestInput(&question))
	again.SetUserId(user)
	again.SetPreviousResponseId(first.GetId())
	_, res, err = api.ResponsesAPI.CreateResponse(ctx).ResponseCreateRequest(*again).Execute()
	expectError("CreateResponse continuing a deleted response", err, 404, statusCode(res), "PREVIOUS_RESPONSE_NOT_FOUND")

	erasure, _, err := api.UsersAPI.EraseUserData(ctx, user).Execute()
	if err != nil {
		fail("EraseUserData: %v", err)
	}
	if erased := erasure.GetErased(); erased.GetResponses() != 1 {
		fail("EraseUserData: erased %+v, expected the 1 response left", erased)
	}
	_, res, err = api.ResponsesAPI.GetResponse(ctx, second.GetId()).Execute()
	expectError("GetResponse of an erased end user's response", err, 404, statusCode(res), "NOT_FOUND")
}
