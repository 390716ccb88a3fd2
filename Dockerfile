# payability's container image: the static release binaries on an empty base,
# for `serve`, `monitor` and `mcp --http`. Nothing is pulled: FROM scratch.
# /payability is the quick build, the entrypoint: it runs `healthcheck` and
# the other quick commands itself and hands `serve`, `monitor`, `mcp`,
# `ledger` and `store` to /payabilityd beside it, the full build, by execve,
# so the server keeps PID 1 and receives the container's signals.
#
# The build context is made by tools/release/image-context.sh from a release's
# dist/ (docs/operations.md, "Container image"):
#   bin/<arch>/payability            the quick build GoReleaser built (CGO_ENABLED=0)
#   bin/<arch>/payabilityd           the full build, from the same commit
#   rootfs/etc/passwd, rootfs/etc/group   one non-root user, payability (65532)
#   rootfs/etc/ssl/certs/ca-certificates.crt   the CA bundle (Debian's ca-certificates)
#   rootfs/data/                     the empty data directory
FROM scratch
ARG TARGETARCH=amd64
COPY rootfs/etc/ /etc/
COPY --chown=65532:65532 rootfs/data/ /data/
COPY bin/${TARGETARCH}/payability /payability
COPY bin/${TARGETARCH}/payabilityd /payabilityd
USER 65532:65532
WORKDIR /data
ENV PAYABILITY_DATA_DIR=/data \
    PAYABILITY_ADDR=0.0.0.0:8402 \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
VOLUME ["/data"]
EXPOSE 8402
# GET http://127.0.0.1:<port of PAYABILITY_ADDR>/healthz, 0 on 200: the binary
# itself, as the image has no curl. For `mcp --http ADDR` on another port, give
# the URL: --health-cmd '/payability healthcheck http://127.0.0.1:PORT/healthz'.
HEALTHCHECK --interval=30s --timeout=6s --start-period=10s --retries=3 CMD ["/payability", "healthcheck"]
ENTRYPOINT ["/payability"]
CMD ["serve"]
