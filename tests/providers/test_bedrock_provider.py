"""The Bedrock providers: URLs, SigV4 signatures equal to botocore's, bearer
API keys, error bodies, and credentials kept out of reprs and logs."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from toolwire.errors import Overloaded, RateLimited, UsageError
from toolwire.messages import UserMessage
from toolwire.providers import Bedrock, BedrockInvoke

botocore_auth = pytest.importorskip("botocore.auth")
from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402

KEY_ID = "AKIDEXAMPLE"
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
TOKEN = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN0123456789"
FROZEN = datetime(2026, 11, 23, 10, 30, 0)
MODEL = "us.amazon.nova-2-lite-v1:0"


@pytest.fixture
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botocore_auth, "get_current_datetime", lambda *a, **k: FROZEN)


@pytest.fixture
def no_aws_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_ROLE_ARN",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def signed_provider(**options: Any) -> Bedrock:
    return Bedrock(region="us-east-1", credentials=(KEY_ID, SECRET, TOKEN), **options)


@pytest.mark.usefixtures("frozen_clock", "no_aws_environment")
def test_the_signature_equals_botocores() -> None:
    request = signed_provider().build_request(model=MODEL, messages=[UserMessage("hi")])
    assert request.url == (
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/"
        "us.amazon.nova-2-lite-v1%3A0/converse-stream"
    )
    ours = dict(request.headers)
    unsigned = {
        k: v
        for k, v in ours.items()
        if k not in ("Authorization", "X-Amz-Date", "X-Amz-Security-Token")
    }
    reference = AWSRequest(method="POST", url=request.url, data=request.content(), headers=unsigned)
    botocore_auth.SigV4Auth(Credentials(KEY_ID, SECRET, TOKEN), "bedrock", "us-east-1").add_auth(
        reference
    )
    assert ours["Authorization"] == reference.headers["Authorization"]
    assert ours["X-Amz-Date"] == reference.headers["X-Amz-Date"] == "20261123T103000Z"
    assert ours["X-Amz-Security-Token"] == TOKEN
    # And a known value, so that a change on both sides is noticed too.
    assert ours["Authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261123/us-east-1/bedrock/aws4_request, "
        "SignedHeaders=accept;content-type;host;x-amz-date;x-amz-security-token, "
        "Signature=" + KNOWN_SIGNATURE
    )


KNOWN_SIGNATURE = "5631a66016449fd64d1fba9efe117d64c7f4f2971b05660e42e484e5d020ef06"


@pytest.mark.usefixtures("frozen_clock", "no_aws_environment")
def test_no_credential_in_reprs_or_debug_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    provider = signed_provider()
    request = provider.build_request(model=MODEL, messages=[UserMessage("hi")])
    shown = repr(request) + repr(provider) + caplog.text
    for secret in (SECRET, TOKEN, request.headers["Authorization"].rsplit("=", 1)[1]):
        assert secret not in shown


@pytest.mark.usefixtures("no_aws_environment")
def test_the_standard_chain_finds_environment_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY_ID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_REGION", "eu-west-3")
    request = Bedrock().build_request(model=MODEL, messages=[UserMessage("hi")], stream=False)
    assert request.url.startswith("https://bedrock-runtime.eu-west-3.amazonaws.com/model/")
    assert request.url.endswith("/converse")
    assert "Credential=AKIDEXAMPLE/" in request.headers["Authorization"]
    assert "/eu-west-3/bedrock/aws4_request" in request.headers["Authorization"]
    assert "X-Amz-Security-Token" not in request.headers


@pytest.mark.usefixtures("no_aws_environment")
def test_without_credentials_or_region_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no AWS region"):
        Bedrock(credentials=(KEY_ID, SECRET))
    with pytest.raises(UsageError, match="no AWS credentials"):
        Bedrock(region="us-east-1")


@pytest.mark.usefixtures("no_aws_environment")
def test_an_api_key_is_a_bearer_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-0123456789")
    provider = BedrockInvoke(region="us-west-2")
    request = provider.build_request(
        model="us.anthropic.claude-sonnet-4-5-20250929-v1:0", messages=[UserMessage("hi")]
    )
    assert request.url.endswith("/invoke-with-response-stream")
    assert request.headers["authorization"] == "Bearer bedrock-api-key-0123456789"
    assert request.headers["accept"] == "application/vnd.amazon.eventstream"
    assert request.json["anthropic_version"] == "bedrock-2023-05-31"
    assert "bedrock-api-key-0123456789" not in repr(request)


@pytest.mark.usefixtures("no_aws_environment")
def test_errors_are_typed_by_their_aws_exception() -> None:
    provider = signed_provider()
    throttled = provider.parse_error(
        429, {"x-amzn-ErrorType": "ThrottlingException:http://internal"}, b'{"message":"slow"}'
    )
    assert isinstance(throttled, RateLimited)
    assert throttled.error_type == "ThrottlingException"
    assert "slow" in throttled.message
    busy = provider.parse_error(
        400, {"X-Amzn-ErrorType": "ModelNotReadyException"}, {"Message": "warming up"}
    )
    assert isinstance(busy, Overloaded)
    echoed = provider.parse_error(403, {}, {"message": f"bad token {TOKEN}"})
    assert TOKEN not in echoed.message and TOKEN not in str(echoed.body)
