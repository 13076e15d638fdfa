// Smoke test of the Go client generated from openapi/openapi.yaml against a running pvai server.
//
//	node scripts/generate.mjs --go DIR
//	go mod edit -replace pvai.local/generated/go-client=DIR && go mod tidy && go build -o smoke .
//	./smoke        # with PVAI_URL, PVAI_API_KEY and PVAI_ADMIN_TOKEN set (serve-for-contract.mjs sets them)
//
// Checks, through the generated client only (its models decode strictly: an undocumented field fails):
//  1. ListModels with the key as `Authorization: Bearer`: the four PV models (and PV-EMBED, kind embedding, when
//     the server has an embedding model: serve-for-contract.mjs --models setup);
//  2. GetModel with the key as `X-API-Key` (the other security scheme);
//  3. a chat completion: 200, one choice with text, usage that adds up;
//  4. ExecuteCode: the sandbox's output;
//  5. typed errors read through GenericOpenAPIError.Model(): 403 MODEL_NOT_ALLOWED for a free account asking
//     for PV-ADVANCED, 401 UNAUTHORIZED for a wrong key;
//  6. balances past 2^31: an account created with 3,000,000,000 credits reads that balance from GetUsage (int64),
//     and a grant that would pass the 10^12 ceiling is 400 INVALID_PARAMETER naming `amount`;
//  7. with PV-EMBED listed, CreateEmbedding: a vector of the model's dimensions per text (float32 values), and
//     base64 (little-endian float32) the same values;
//  8. an end user's export (a corrected memory, a deleted one with its history, a document with its text, the
//     usage rows) and erase (the counts, then an empty export and zeros; users.go);
//  9. the Responses API (responses.go): a response from input items, one continuing it (previous_response_id),
//     GetResponse as created, the input items a page at a time in both orders, the export's responses with their
//     input items, DeleteResponse and the 404s after it (get, input items, continuing it), the erase's count.
//
// Exits 1 on the first failed check.
package main

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"net/http"
	"os"
	"sort"
	"strings"

	pvai "pvai.local/generated/go-client"
)

const bigBalance int64 = 3_000_000_000 // past 2^31: int32 clients could not read it
const ceiling int64 = 1_000_000_000_000

func fail(format string, args ...interface{}) {
	fmt.Printf("FAIL "+format+"\n", args...)
	os.Exit(1)
}

func ok(format string, args ...interface{}) {
	fmt.Printf("ok   "+format+"\n", args...)
}

func env(name string) string {
	value := os.Getenv(name)
	if value == "" {
		fail("%s must be set (test/contract/serve-for-contract.mjs sets it)", name)
	}
	return value
}

func newClient(url string) *pvai.APIClient {
	cfg := pvai.NewConfiguration()
	cfg.Servers = pvai.ServerConfigurations{{URL: url}}
	return pvai.NewAPIClient(cfg)
}

func bearer(token string) context.Context {
	return context.WithValue(context.Background(), pvai.ContextAccessToken, token)
}

// expectError checks that err is the client's error for this status with the documented body and this code.
func expectError(what string, err error, status int, statusGot int, code string) pvai.Error {
	if err == nil {
		fail("%s: expected %d %s, got a success", what, status, code)
	}
	var apiErr *pvai.GenericOpenAPIError
	if !errors.As(err, &apiErr) {
		fail("%s: expected a *GenericOpenAPIError, got %T: %v", what, err, err)
	}
	body, isError := apiErr.Model().(pvai.Error)
	if !isError {
		fail("%s: the error body did not decode as Error (%v): %s", what, err, apiErr.Body())
	}
	if statusGot != status || body.GetCode() != code {
		fail("%s: expected %d %s, got %d %s", what, status, code, statusGot, body.GetCode())
	}
	ok("%s: %d %s (%s)", what, status, code, body.GetMessage())
	return body
}

func main() {
	url := env("PVAI_URL")
	key := env("PVAI_API_KEY")
	adminToken := env("PVAI_ADMIN_TOKEN")
	api := newClient(url)
	asKey := bearer(key)
	asAdmin := bearer(adminToken)

	// 1. list models, Bearer
	models, _, err := api.ModelsAPI.ListModels(asKey).Execute()
	if err != nil {
		fail("ListModels: %v", err)
	}
	var ids []string
	var embedding *pvai.Model
	for _, m := range models.GetData() {
		if m.GetId() == "PV-EMBED" {
			if m.GetKind() != "embedding" {
				fail("ListModels: PV-EMBED has kind %s", m.GetKind())
			}
			embedding = &m
			continue
		}
		if m.GetKind() != "chat" {
			fail("ListModels: %s has kind %s", m.GetId(), m.GetKind())
		}
		ids = append(ids, m.GetId())
	}
	sort.Strings(ids)
	if strings.Join(ids, ",") != "PV-ADVANCED,PV-CODEX,PV-STANDARD,PV-TURBO" {
		fail("ListModels: expected the four PV models, got %v", ids)
	}
	ok("ListModels (Bearer): %v (PV-EMBED listed: %t)", ids, embedding != nil)

	// 2. one model, X-API-Key
	asHeader := context.WithValue(context.Background(), pvai.ContextAPIKeys, map[string]pvai.APIKey{
		"ApiKeyHeader": {Key: key},
	})
	model, _, err := api.ModelsAPI.GetModel(asHeader, "PV-STANDARD").Execute()
	if err != nil {
		fail("GetModel: %v", err)
	}
	if model.GetId() != string(pvai.PV_STANDARD) || model.GetCreditsPerRequest() != 2 {
		fail("GetModel: expected PV-STANDARD at 2 credits, got %s at %d", model.GetId(), model.GetCreditsPerRequest())
	}
	ok("GetModel (X-API-Key): PV-STANDARD, %d credits", model.GetCreditsPerRequest())

	// 3. a chat completion
	hello := "Say hello."
	request := pvai.NewChatCompletionRequest(string(pvai.PV_TURBO), []pvai.ChatMessage{
		pvai.UserMessageAsChatMessage(pvai.NewUserMessage("user", pvai.StringAsMessageContent(&hello))),
	})
	request.SetUserId("go-smoke")
	request.SetMaxTokens(16)
	request.SetSkipCache(true)
	completion, res, err := api.ChatAPI.CreateChatCompletion(asKey).ChatCompletionRequest(*request).Execute()
	if err != nil {
		fail("CreateChatCompletion: %v", err)
	}
	choices := completion.GetChoices()
	if len(choices) != 1 || choices[0].Message.GetContent() == "" {
		fail("CreateChatCompletion: expected one choice with text, got %+v", choices)
	}
	usage := completion.GetUsage()
	if usage.GetTotalTokens() != usage.GetPromptTokens()+usage.GetCompletionTokens() {
		fail("CreateChatCompletion: usage does not add up: %+v", usage)
	}
	ok("CreateChatCompletion: %s %q, %d tokens, X-Credits-Charged %s", completion.GetId(),
		choices[0].Message.GetContent(), usage.GetTotalTokens(), res.Header.Get("X-Credits-Charged"))

	// 4. code execution
	result, _, err := api.CodeAPI.ExecuteCode(asKey).
		CodeExecutionRequest(*pvai.NewCodeExecutionRequest("print(2**40)", "go-smoke")).Execute()
	if err != nil {
		fail("ExecuteCode: %v", err)
	}
	if result.GetOutput() != "1099511627776\n" || result.Error.Get() != nil {
		fail("ExecuteCode: expected 1099511627776, got output %q, error %v", result.GetOutput(), result.Error.Get())
	}
	ok("ExecuteCode: %q in %d ms", strings.TrimSpace(result.GetOutput()), result.GetExecutionTimeMs())

	tag := fmt.Sprintf("%08x", rand.Uint32())

	// 5. typed errors: a free account may not use PV-ADVANCED (403), a wrong key is 401
	freeRequest := pvai.NewAccountCreateRequest("go-smoke-free-"+tag+"@example.com", pvai.FREE)
	free, _, err := api.AdminAPI.AdminCreateAccount(asAdmin).AccountCreateRequest(*freeRequest).Execute()
	if err != nil {
		fail("AdminCreateAccount (free): %v", err)
	}
	advanced := pvai.NewChatCompletionRequest(string(pvai.PV_ADVANCED), request.GetMessages())
	advanced.SetUserId("go-smoke")
	_, res, err = api.ChatAPI.CreateChatCompletion(bearer(free.GetApiKey())).ChatCompletionRequest(*advanced).Execute()
	expectError("CreateChatCompletion PV-ADVANCED on the free tier", err, 403, statusCode(res), "MODEL_NOT_ALLOWED")
	_, res, err = api.ModelsAPI.ListModels(bearer("pv_sk_" + strings.Repeat("0", 40))).Execute()
	expectError("ListModels with a wrong key", err, 401, statusCode(res), "UNAUTHORIZED")

	// 6. a balance past 2^31, read as int64, and the ceiling
	richRequest := pvai.NewAccountCreateRequest("go-smoke-rich-"+tag+"@example.com", pvai.ENTERPRISE)
	richRequest.SetCredits(bigBalance)
	rich, _, err := api.AdminAPI.AdminCreateAccount(asAdmin).AccountCreateRequest(*richRequest).Execute()
	if err != nil {
		fail("AdminCreateAccount with %d credits: %v", bigBalance, err)
	}
	report, _, err := api.UsageAPI.GetUsage(bearer(rich.GetApiKey())).Execute()
	if err != nil {
		fail("GetUsage for an account with %d credits: %v", bigBalance, err)
	}
	if report.Credits.GetBalance() != bigBalance {
		fail("GetUsage: expected a balance of %d, got %d", bigBalance, report.Credits.GetBalance())
	}
	ok("GetUsage: balance %d (past 2^31), tier %s", report.Credits.GetBalance(), report.GetTier())
	accountID := rich.Account.GetId()
	_, res, err = api.AdminAPI.AdminAddCredits(asAdmin, accountID).
		CreditsAddRequest(*pvai.NewCreditsAddRequest(ceiling - bigBalance + 1)).Execute()
	body := expectError("AdminAddCredits past the 10^12 ceiling", err, 400, statusCode(res), "INVALID_PARAMETER")
	if body.Details["field"] != "amount" {
		fail("AdminAddCredits past the ceiling: expected details.field amount, got %v", body.Details)
	}
	account, _, err := api.AdminAPI.AdminAddCredits(asAdmin, accountID).
		CreditsAddRequest(*pvai.NewCreditsAddRequest(ceiling - bigBalance)).Execute()
	if err != nil || account.GetCredits() != ceiling {
		fail("AdminAddCredits up to the ceiling: expected %d credits, got %v (%v)", ceiling, account, err)
	}
	ok("AdminAddCredits up to the ceiling: %d credits", account.GetCredits())

	// 7. embeddings, when the server has an embedding model
	if embedding == nil {
		ok("CreateEmbedding: skipped, no embedding model on this server (serve-for-contract.mjs --models setup)")
	} else {
		smokeEmbeddings(asKey, api, int(embedding.GetDimensions()))
	}

	// 8. an end user's export and erase
	smokeUserData(asKey, api)

	// 9. the Responses API
	smokeResponses(asKey, api)

	fmt.Println("go client smoke test passed")
}

// smokeEmbeddings embeds two texts as float32 values and as base64, and checks both give the same vectors.
func smokeEmbeddings(ctx context.Context, api *pvai.APIClient, dimensions int) {
	texts := []string{"The cat sits on the mat.", "A feline rests on a rug."}
	embed := func(format string) []pvai.Embedding {
		request := pvai.NewEmbeddingRequest("PV-EMBED", pvai.ArrayOfStringAsEmbeddingRequestInput(&texts))
		request.SetEncodingFormat(format)
		list, _, err := api.EmbeddingsAPI.CreateEmbedding(ctx).EmbeddingRequest(*request).Execute()
		if err != nil {
			fail("CreateEmbedding (%s): %v", format, err)
		}
		if len(list.GetData()) != len(texts) {
			fail("CreateEmbedding (%s): %d vectors for %d texts", format, len(list.GetData()), len(texts))
		}
		return list.GetData()
	}
	floats, encoded := embed("float"), embed("base64")
	for i := range texts {
		values := floats[i].Embedding.ArrayOfFloat32
		text := encoded[i].Embedding.String
		if values == nil || text == nil || len(*values) != dimensions {
			fail("CreateEmbedding: vector %d is not %d float32 values and a base64 string", i, dimensions)
		}
		bytes, err := base64.StdEncoding.DecodeString(*text)
		if err != nil || len(bytes) != 4*dimensions {
			fail("CreateEmbedding: vector %d's base64 does not decode to %d float32 values (%v)", i, dimensions, err)
		}
		for j, value := range *values {
			if math.Float32frombits(binary.LittleEndian.Uint32(bytes[4*j:])) != value {
				fail("CreateEmbedding: vector %d differs at %d between float and base64", i, j)
			}
		}
	}
	ok("CreateEmbedding: %d vectors of %d, base64 = float", len(texts), dimensions)
}

// statusCode is the response's status, or 0 when the request got no response.
func statusCode(res *http.Response) int {
	if res == nil {
		return 0
	}
	return res.StatusCode
}
