//! Fetching a known model into the cache: streamed to a `.part` file
//! beside the target, resumed from where a broken download stopped (an
//! HTTP range request), checked against its SHA-256 and only then renamed
//! into place. A file that fails the check is deleted.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use futures::StreamExt;
use sha2::{Digest, Sha256};

use crate::BuiltinError;
use crate::catalog::KnownModel;

/// How far a download is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Bytes in the file so far (those of an earlier attempt included).
    pub done: u64,
    /// The whole file's size.
    pub total: u64,
    /// Bytes an earlier, broken download had already fetched.
    pub resumed_from: u64,
    /// The download is complete and the file is being checked.
    pub verifying: bool,
}

/// The file a download in progress is written to.
pub fn part_path(dest: &Path) -> PathBuf {
    let mut name = dest
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".part");
    dest.with_file_name(name)
}

/// Downloads `model` from `url` to `dest`, calling `progress` as bytes
/// arrive. On success `dest` holds the checked file.
pub async fn download(
    model: &KnownModel,
    url: &str,
    dest: &Path,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<PathBuf, BuiltinError> {
    let part = part_path(dest);
    if let Some(dir) = dest.parent() {
        fs_err::create_dir_all(dir).map_err(|e| io_error(dir, e))?;
    }
    let mut have = fs_err::metadata(&part).map(|m| m.len()).unwrap_or(0);
    if have > model.size {
        // Not the start of this file: begin again.
        fs_err::remove_file(&part).map_err(|e| io_error(&part, e))?;
        have = 0;
    }
    let resumed_from = have;
    if have < model.size {
        fetch(model, url, &part, have, progress).await?;
    }
    progress(Progress {
        done: model.size,
        total: model.size,
        resumed_from,
        verifying: true,
    });
    let part_for_hash = part.clone();
    let got = tokio::task::spawn_blocking(move || sha256_of(&part_for_hash))
        .await
        .map_err(|e| BuiltinError::Io {
            path: part.clone(),
            message: e.to_string(),
        })??;
    if got != model.sha256 {
        let _ = fs_err::remove_file(&part);
        return Err(BuiltinError::Checksum {
            url: url.to_owned(),
            expected: model.sha256.to_owned(),
            got,
        });
    }
    fs_err::rename(&part, dest).map_err(|e| io_error(dest, e))?;
    Ok(dest.to_path_buf())
}

async fn fetch(
    model: &KnownModel,
    url: &str,
    part: &Path,
    mut have: u64,
    progress: &mut (dyn FnMut(Progress) + Send),
) -> Result<(), BuiltinError> {
    let resumed_from = have;
    let client = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| unreachable(url, &e))?;
    let mut request = client.get(url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let response = request.send().await.map_err(|e| unreachable(url, &e))?;
    let status = response.status();
    let mut file = match status.as_u16() {
        206 if have > 0 => fs_err::OpenOptions::new()
            .append(true)
            .open(part)
            .map_err(|e| io_error(part, e))?,
        200 => {
            // The server sends the whole file (no range support): start over.
            have = 0;
            fs_err::File::create(part).map_err(|e| io_error(part, e))?
        }
        416 if have > 0 => return Ok(()),
        _ => {
            return Err(BuiltinError::Http {
                url: url.to_owned(),
                status: status.as_u16(),
            });
        }
    };
    progress(Progress {
        done: have,
        total: model.size,
        resumed_from,
        verifying: false,
    });
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| BuiltinError::Interrupted {
            url: url.to_owned(),
            done: have,
            total: model.size,
            reason: e.to_string(),
        })?;
        if have + chunk.len() as u64 > model.size {
            drop(file);
            let _ = fs_err::remove_file(part);
            return Err(BuiltinError::TooLarge {
                url: url.to_owned(),
                expected: model.size,
            });
        }
        file.write_all(&chunk).map_err(|e| io_error(part, e))?;
        have += chunk.len() as u64;
        progress(Progress {
            done: have,
            total: model.size,
            resumed_from,
            verifying: false,
        });
    }
    file.flush().map_err(|e| io_error(part, e))?;
    if have < model.size {
        return Err(BuiltinError::Interrupted {
            url: url.to_owned(),
            done: have,
            total: model.size,
            reason: "the server closed the connection early".to_owned(),
        });
    }
    Ok(())
}

/// The SHA-256 of a file, lowercase hex.
pub fn sha256_of(path: &Path) -> Result<String, BuiltinError> {
    let mut file = fs_err::File::open(path).map_err(|e| io_error(path, e))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer).map_err(|e| io_error(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn io_error(path: &Path, e: std::io::Error) -> BuiltinError {
    BuiltinError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

fn unreachable(url: &str, e: &reqwest::Error) -> BuiltinError {
    use std::error::Error as _;
    let mut reason = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        reason = format!("{reason}: {s}");
        source = s.source();
    }
    BuiltinError::Unreachable {
        url: url.to_owned(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::body::Body;
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::Response;

    use super::*;

    /// How the test server serves the file.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Mode {
        Whole,
        /// Half the file, then the connection breaks.
        BreakHalfway,
        /// Other bytes than the model's.
        Corrupt,
        /// No range support: always the whole file with 200.
        NoRanges,
    }

    #[derive(Clone)]
    struct Server {
        data: Arc<Vec<u8>>,
        mode: Arc<Mutex<Mode>>,
        ranges: Arc<Mutex<Vec<String>>>,
    }

    async fn serve(State(s): State<Server>, headers: HeaderMap) -> Response {
        let mode = *s.mode.lock().unwrap();
        let range = headers
            .get("range")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        s.ranges
            .lock()
            .unwrap()
            .push(range.clone().unwrap_or_default());
        let mut data = (*s.data).clone();
        if mode == Mode::Corrupt {
            data[0] ^= 0xff;
        }
        let from = match (&range, mode) {
            (Some(r), m) if m != Mode::NoRanges => r
                .trim_start_matches("bytes=")
                .trim_end_matches('-')
                .parse::<usize>()
                .unwrap(),
            _ => 0,
        };
        let status = if from > 0 {
            StatusCode::PARTIAL_CONTENT
        } else {
            StatusCode::OK
        };
        let body = data[from..].to_vec();
        let body = if mode == Mode::BreakHalfway {
            let half = body[..body.len() / 2].to_vec();
            let first = futures::stream::iter([Ok::<_, std::io::Error>(half)]);
            let then_break = futures::stream::once(async {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                Err(std::io::Error::other("cut"))
            });
            Body::from_stream(first.chain(then_break))
        } else {
            Body::from(body)
        };
        Response::builder().status(status).body(body).unwrap()
    }

    async fn start(data: Vec<u8>) -> (String, Server) {
        let server = Server {
            data: Arc::new(data),
            mode: Arc::new(Mutex::new(Mode::Whole)),
            ranges: Arc::new(Mutex::new(Vec::new())),
        };
        let app = axum::Router::new()
            .route("/{*path}", axum::routing::get(serve))
            .with_state(server.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        (url, server)
    }

    fn model_of(data: &[u8]) -> KnownModel {
        let sha: String = Sha256::digest(data)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        KnownModel {
            name: "test-model",
            description: "",
            repo: "test/model",
            file: "test.gguf",
            size: data.len() as u64,
            sha256: Box::leak(sha.into_boxed_str()),
        }
    }

    #[tokio::test]
    async fn downloads_resumes_and_refuses_a_wrong_file() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let model = model_of(&data);
        let (base, server) = start(data.clone()).await;
        let url = model.url(Some(&base));
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("models").join(model.file);

        // A download that breaks off keeps what arrived…
        *server.mode.lock().unwrap() = Mode::BreakHalfway;
        let error = download(&model, &url, &dest, &mut |_| {})
            .await
            .unwrap_err();
        assert!(matches!(error, BuiltinError::Interrupted { .. }), "{error}");
        assert!(error.hint().unwrap().contains("resumes"));
        let kept = fs_err::metadata(part_path(&dest)).unwrap().len();
        assert!(kept > 0 && kept < data.len() as u64, "{kept}");
        assert!(!dest.exists());

        // …and the next one asks only for the rest, reporting progress.
        *server.mode.lock().unwrap() = Mode::Whole;
        let mut seen = Vec::new();
        let path = download(&model, &url, &dest, &mut |p| seen.push(p))
            .await
            .unwrap();
        assert_eq!(fs_err::read(&path).unwrap(), data);
        assert!(!part_path(&dest).exists());
        assert_eq!(
            server.ranges.lock().unwrap().last().unwrap(),
            &format!("bytes={kept}-")
        );
        assert!(
            seen.iter()
                .all(|p| p.resumed_from == kept && p.total == model.size)
        );
        assert!(seen.windows(2).all(|w| w[0].done <= w[1].done));
        assert!(seen.last().unwrap().verifying);

        // A server without ranges sends it all again: started over.
        fs_err::remove_file(&dest).unwrap();
        fs_err::write(part_path(&dest), &data[..1000]).unwrap();
        *server.mode.lock().unwrap() = Mode::NoRanges;
        download(&model, &url, &dest, &mut |_| {}).await.unwrap();
        assert_eq!(fs_err::read(&dest).unwrap(), data);

        // Bytes that are not the model are not kept.
        fs_err::remove_file(&dest).unwrap();
        *server.mode.lock().unwrap() = Mode::Corrupt;
        let error = download(&model, &url, &dest, &mut |_| {})
            .await
            .unwrap_err();
        assert!(matches!(error, BuiltinError::Checksum { .. }), "{error}");
        assert!(error.to_string().contains(model.sha256));
        assert!(!dest.exists() && !part_path(&dest).exists());
    }

    #[tokio::test]
    async fn an_error_status_or_no_server_is_reported() {
        let data = vec![1u8; 10];
        let model = model_of(&data);
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join(model.file);
        let error = download(&model, "http://127.0.0.1:9/x.gguf", &dest, &mut |_| {})
            .await
            .unwrap_err();
        assert!(matches!(error, BuiltinError::Unreachable { .. }), "{error}");
        assert!(error.hint().unwrap().contains("mirror"));
        let app = axum::Router::new();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/missing.gguf", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        let error = download(&model, &url, &dest, &mut |_| {})
            .await
            .unwrap_err();
        assert!(
            matches!(error, BuiltinError::Http { status: 404, .. }),
            "{error}"
        );
    }
}
