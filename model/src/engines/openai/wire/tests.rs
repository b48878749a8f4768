//! The typed bodies serialize byte for byte as the `json!` bodies the engine sent before them,
//! and read the answers of real servers (vLLM's shapes), `null`s and omissions included.

use serde_json::json;

use super::*;

fn sent(body: &impl Serialize) -> String {
    serde_json::to_string(body).expect("serializable")
}

#[test]
fn completion_requests_are_the_former_json() {
    // The probe (echo on or off), the echo scoring, the top-log-probability scoring and the
    // generation through /completions.
    for (echo, count) in [(true, 1u32), (false, 20)] {
        let typed = CompletionRequest {
            model: "m",
            prompt: "The capital of France is",
            max_tokens: 1,
            temperature: 0.0,
            echo: Some(echo),
            logprobs: Some(count),
            biased: None,
        };
        let former = json!({
            "model": "m",
            "prompt": "The capital of France is",
            "max_tokens": 1,
            "temperature": 0.0,
            "echo": echo,
            "logprobs": count,
        });
        assert_eq!(sent(&typed), former.to_string());
    }
    let typed = CompletionRequest {
        model: "m",
        prompt: "<s>Q? A",
        max_tokens: 1,
        temperature: 0.0,
        echo: Some(true),
        logprobs: Some(1),
        biased: None,
    };
    let former = json!({
        "model": "m",
        "prompt": format!("{}{}", "<s>Q?", " A"),
        "max_tokens": 1,
        "temperature": 0.0,
        "echo": true,
        "logprobs": 1,
    });
    assert_eq!(sent(&typed), former.to_string());
    let typed = CompletionRequest {
        model: "m",
        prompt: "<s>Q?",
        max_tokens: 1,
        temperature: 0.0,
        echo: None,
        logprobs: Some(5),
        biased: None,
    };
    let former = json!({
        "model": "m",
        "prompt": "<s>Q?",
        "max_tokens": 1,
        "temperature": 0.0,
        "logprobs": 5u32,
    });
    assert_eq!(sent(&typed), former.to_string());
    let typed = CompletionRequest {
        model: "m",
        prompt: "<s>Q? \"quoted\"\n",
        max_tokens: 256,
        temperature: 0.0,
        echo: None,
        logprobs: None,
        biased: None,
    };
    let former = json!({
        "model": "m",
        "prompt": "<s>Q? \"quoted\"\n",
        "max_tokens": 256u32,
        "temperature": 0.0,
    });
    assert_eq!(sent(&typed), former.to_string());
    assert_eq!(
        sent(&typed),
        r#"{"model":"m","prompt":"<s>Q? \"quoted\"\n","max_tokens":256,"temperature":0.0}"#
    );
}

#[test]
fn chat_requests_are_the_former_json() {
    let kwargs = json!({"enable_thinking": false});
    for chat_template_kwargs in [None, Some(&kwargs)] {
        let typed = ChatRequest {
            model: "m",
            messages: vec![
                ChatMessage {
                    role: "system",
                    content: "Be brief.",
                },
                ChatMessage {
                    role: "user",
                    content: "Q?",
                },
            ],
            max_tokens: 64,
            temperature: 0.0,
            chat_template_kwargs,
        };
        let msgs: Vec<Value> = [("system", "Be brief."), ("user", "Q?")]
            .into_iter()
            .map(|(role, content)| json!({"role": role, "content": content}))
            .collect();
        let mut former = json!({
            "model": "m",
            "messages": msgs,
            "max_tokens": 64u32,
            "temperature": 0.0,
        });
        if let Some(k) = chat_template_kwargs {
            former["chat_template_kwargs"] = k.clone();
        }
        assert_eq!(sent(&typed), former.to_string());
    }
}

#[test]
fn an_echo_answer_is_read() {
    // vLLM's answer to the probe: the first prompt token has no log-probability.
    let answer: CompletionResponse = serde_json::from_str(
        r#"{"id":"cmpl-1","object":"text_completion","created":1,"model":"m",
            "choices":[{"index":0,"text":"The capital of France is Paris",
              "logprobs":{"text_offset":[0,3,11,18,21,24],
                "token_logprobs":[null,-5.25,-3.0,-0.5,-0.25,-0.125],
                "tokens":["The"," capital"," of"," France"," is"," Paris"],
                "top_logprobs":[null,{" capital":-5.25},{" of":-3.0},{" France":-0.5},
                  {" is":-0.25},{" Paris":-0.125}]},
              "finish_reason":"length","stop_reason":null,"prompt_logprobs":null}],
            "usage":{"prompt_tokens":5,"total_tokens":6,"completion_tokens":1}}"#,
    )
    .expect("decoded");
    let lp = answer.logprobs().expect("logprobs");
    assert_eq!(lp.tokens.len(), 6);
    let token_logprobs = lp.token_logprobs.as_deref().expect("token_logprobs");
    assert_eq!(token_logprobs[0], None);
    assert_eq!(token_logprobs[5], Some(-0.125));
    assert_eq!(answer.first_top_logprobs(), None);
    assert_eq!(answer.choices[0].finish_reason.as_deref(), Some("length"));
    let usage = answer.usage.expect("usage");
    assert_eq!(
        (usage.prompt_tokens, usage.completion_tokens),
        (Some(5), Some(1))
    );
}

#[test]
fn omitted_and_null_fields_read_as_absent() {
    for body in [
        r#"{}"#,
        r#"{"choices":null,"usage":null}"#,
        r#"{"choices":[{"text":null,"logprobs":null,"finish_reason":null}],"usage":{}}"#,
        r#"{"choices":[{"logprobs":{"tokens":null,"token_logprobs":null,"top_logprobs":null}}]}"#,
    ] {
        let answer: CompletionResponse = serde_json::from_str(body).expect(body);
        assert!(answer
            .logprobs()
            .and_then(|l| l.token_logprobs.as_ref())
            .is_none());
        assert!(answer.logprobs().is_none_or(|l| l.tokens.is_empty()));
        assert!(answer.first_top_logprobs().is_none());
        assert!(answer.usage.unwrap_or_default().prompt_tokens.is_none());
    }
    let chat: ChatResponse = serde_json::from_str(
        r#"{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"stop"}]}"#,
    )
    .expect("decoded");
    assert!(chat.choices[0]
        .message
        .as_ref()
        .expect("message")
        .content
        .is_none());
    let models: ModelList = serde_json::from_str(r#"{"object":"list"}"#).expect("decoded");
    assert!(models.data.is_empty());
}

#[test]
fn top_logprobs_are_read() {
    let answer: CompletionResponse = serde_json::from_str(
        r#"{"choices":[{"text":" A","logprobs":{"tokens":[" A"],"token_logprobs":[-0.1],
            "top_logprobs":[{" A":-0.1," B":-2.5}]}}],"usage":{"prompt_tokens":9,"completion_tokens":1}}"#,
    )
    .expect("decoded");
    // Most probable first; the legacy shape has no ids.
    assert_eq!(
        top_entries(&answer),
        [
            (None, " A".to_string(), -0.1),
            (None, " B".to_string(), -2.5)
        ]
    );
}

/// The first token's top entries of `answer` as (id, text, log-probability).
fn top_entries(answer: &CompletionResponse) -> Vec<(Option<u32>, String, f64)> {
    answer
        .first_top_logprobs()
        .expect("top")
        .into_iter()
        .map(|t| (t.id, t.text, t.logprob))
        .collect()
}

#[test]
fn llamacpp_top_entries_are_read_with_their_ids() {
    // llama.cpp's server (b0c1e570): `content` per generated token, its top entries as
    // log-probabilities, or with post_sampling_probs as probabilities (read as their logs).
    let answer: CompletionResponse = serde_json::from_str(
        r#"{"choices":[{"text":" A","index":0,"logprobs":{"content":[{"id":330,"token":" A",
            "bytes":[32,65],"logprob":-0.1,"top_logprobs":[
              {"id":389,"token":" B","bytes":[32,66],"logprob":-2.5},
              {"id":330,"token":" A","bytes":[32,65],"logprob":-0.1}]}]},
            "finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":1}}"#,
    )
    .expect("decoded");
    assert_eq!(
        top_entries(&answer),
        [
            (Some(330), " A".to_string(), -0.1),
            (Some(389), " B".to_string(), -2.5)
        ]
    );
    let answer: CompletionResponse = serde_json::from_str(
        r#"{"choices":[{"logprobs":{"content":[{"id":330,"token":" A","prob":0.75,
            "top_probs":[{"id":330,"token":" A","prob":0.75},{"id":389,"token":" B","prob":0.25}]}]}}]}"#,
    )
    .expect("decoded");
    let top = answer.first_top_logprobs().expect("top");
    assert_eq!(top[1].id, Some(389));
    assert!((top[1].logprob - 0.25f64.ln()).abs() < 1e-15);
    assert_eq!(
        answer.logprobs().expect("logprobs").content[0]
            .top_probs
            .len(),
        2
    );
}

#[test]
fn a_biased_request_sends_llamacpps_sampling_fields() {
    let typed = CompletionRequest {
        model: "m",
        prompt: "Q?",
        max_tokens: 1,
        temperature: 1.0,
        echo: None,
        logprobs: Some(2),
        biased: Some(BiasedSampling {
            logit_bias: [("330", 100.0), ("389", 100.0)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect(),
            samplers: ["top_k"],
            top_k: 2,
            post_sampling_probs: true,
        }),
    };
    let expected = json!({
        "model": "m",
        "prompt": "Q?",
        "max_tokens": 1,
        "temperature": 1.0,
        "logprobs": 2,
        "logit_bias": {"330": 100.0, "389": 100.0},
        "samplers": ["top_k"],
        "top_k": 2,
        "post_sampling_probs": true,
    });
    assert_eq!(sent(&typed), expected.to_string());
}

#[test]
fn a_model_entry_keeps_its_stable_fields_in_the_servers_order() {
    let models: ModelList = serde_json::from_str(
        r#"{"object":"list","data":[{"id":"m","object":"model","created":1761000000,
            "owned_by":"vllm","root":"/models/m","parent":null,"max_model_len":4096,
            "permission":[{"id":"modelperm-1"}]},{"id":"other"},{"object":"model"}]}"#,
    )
    .expect("decoded");
    let ids: Vec<&str> = models.data.iter().filter_map(ModelEntry::id).collect();
    assert_eq!(ids, ["m", "other"]);
    let stable = models.data[0].clone().stable();
    assert_eq!(
        stable.to_string(),
        r#"{"id":"m","object":"model","owned_by":"vllm","root":"/models/m","parent":null,"max_model_len":4096}"#
    );
}
