"""AWS Signature Version 4 for toolwire's own requests, through botocore.

botocore (``pip install 'toolwire[bedrock]'``) finds the credentials by the
standard chain — explicit keys, the environment (``AWS_ACCESS_KEY_ID``...),
the shared config and credentials files and their profiles, SSO, web
identity, container and instance roles — and computes the signature; the
request is still sent by toolwire's transport, not by boto3.

Signing uses botocore's ``SigV4Auth`` step by step (canonical request,
string to sign, signature) rather than its ``add_auth``, which writes the
canonical request, session token included, to the ``botocore.auth`` debug
log: no credential is ever logged. The result is the same signature (a test
compares them with the clock frozen).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from toolwire.errors import UsageError

__all__ = ["AwsSigner", "load_botocore"]


def load_botocore() -> Any:
    """The ``botocore`` module, or a usage error that says how to install it."""
    try:
        import botocore.auth  # type: ignore[import-untyped]
        import botocore.awsrequest  # type: ignore[import-untyped]
        import botocore.credentials  # type: ignore[import-untyped]
        import botocore.session  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - botocore is a dev dependency
        raise UsageError(
            "AWS SigV4 signing needs botocore: pip install 'toolwire[bedrock]' "
            "(or pass api_key= with a Bedrock API key)"
        ) from None
    return botocore


class AwsSigner:
    """Signs requests for one AWS service and region.

    Args:
        service: the signing name (``"bedrock"`` for ``bedrock-runtime``).
        region: the region; else ``AWS_REGION``/``AWS_DEFAULT_REGION`` or the
            profile's ``region``.
        profile: a profile of the shared config files.
        credentials: explicit ``(access key id, secret access key[, session
            token])``, or a botocore credentials object; else the standard chain.

    Raises:
        UsageError: botocore is missing, or no region or no credentials were found.
    """

    def __init__(
        self,
        *,
        service: str,
        region: str | None = None,
        profile: str | None = None,
        credentials: Any = None,
    ) -> None:
        botocore = load_botocore()
        self._botocore = botocore
        self.service = service
        session = botocore.session.Session(profile=profile)
        found = region or os.environ.get("AWS_REGION") or session.get_config_variable("region")
        if not found:
            raise UsageError(
                "no AWS region: pass region= or set AWS_REGION (or a profile's region)"
            )
        self.region: str = found
        if isinstance(credentials, tuple | list):
            credentials = botocore.credentials.Credentials(*credentials)
        if credentials is None:
            credentials = _guarded(session.get_credentials)
        self._credentials = credentials
        if self._credentials is None:
            raise UsageError(
                "no AWS credentials found (environment, shared files, SSO or instance role); "
                "pass credentials= or api_key="
            )

    def __repr__(self) -> str:
        return f"AwsSigner(service={self.service!r}, region={self.region!r})"

    def secrets(self) -> list[str]:
        """The current secret key and session token, to scrub from errors."""
        frozen = _guarded(self._credentials.get_frozen_credentials)
        return [s for s in (frozen.secret_key, frozen.token) if s]

    def sign(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> dict[str, str]:
        """The headers that sign this request: ``X-Amz-Date``, the session
        token when there is one, and ``Authorization``. The request must then
        be sent with exactly these URL, headers and body."""
        botocore = self._botocore
        auth = botocore.auth
        frozen = _guarded(self._credentials.get_frozen_credentials)  # refreshed when due
        signer = auth.SigV4Auth(frozen, self.service, self.region)
        request = botocore.awsrequest.AWSRequest(
            method=method, url=url, data=body, headers=dict(headers)
        )
        timestamp = auth.get_current_datetime().strftime(auth.SIGV4_TIMESTAMP)
        request.context["timestamp"] = timestamp
        added = {"X-Amz-Date": timestamp}
        if frozen.token:
            added["X-Amz-Security-Token"] = frozen.token
        for name, value in added.items():
            request.headers[name] = value
        canonical = signer.canonical_request(request)
        signature = signer.signature(signer.string_to_sign(request, canonical), request)
        signed = signer.signed_headers(signer.headers_to_sign(request))
        added["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={signer.scope(request)}, "
            f"SignedHeaders={signed}, Signature={signature}"
        )
        return added


def _guarded(load: Any) -> Any:
    """``load()``, botocore's failures to find or refresh credentials as a usage error."""
    import botocore.exceptions  # type: ignore[import-untyped]

    try:
        return load()
    except botocore.exceptions.BotoCoreError as exc:
        raise UsageError(f"could not load AWS credentials: {exc}") from None
