# oi's R kernel driver: evaluates cells in the global environment, so
# variables, functions and attached packages persist; visible values are
# printed as at the R prompt. Requests on fd 3 are a line "ID NBYTES"
# followed by the code; replies are JSON lines on fd 4; after each cell a
# marker with a per-kernel token goes to stdout and stderr.
local({
  token <- Sys.getenv("OI_KERNEL_TOKEN")
  Sys.unsetenv("OI_KERNEL_TOKEN")
  requests <- file("/dev/fd/3", open = "rb")
  replies <- file("/dev/fd/4", open = "wb")
  out <- file("/dev/fd/1", open = "wb")
  err <- file("/dev/fd/2", open = "wb")
  json_string <- function(x) {
    x <- gsub("\\\\", "\\\\\\\\", x)
    x <- gsub("\"", "\\\\\"", x)
    x <- gsub("\n", "\\\\n", x)
    x <- gsub("\r", "\\\\r", x)
    x <- gsub("\t", "\\\\t", x)
    x <- gsub("[[:cntrl:]]", " ", x)
    paste0("\"", x, "\"")
  }
  send <- function(text) {
    writeBin(charToRaw(paste0(text, "\n")), replies)
    flush(replies)
  }
  send(sprintf('{"type":"ready","pid":%d}', Sys.getpid()))
  repeat {
    header <- readLines(requests, n = 1, warn = FALSE)
    if (length(header) == 0) break
    parts <- strsplit(header, " ", fixed = TRUE)[[1]]
    id <- parts[1]
    size <- as.integer(parts[2])
    code <- if (size > 0) rawToChar(readBin(requests, "raw", n = size)) else ""
    Encoding(code) <- "UTF-8"
    send(sprintf('{"type":"started","id":%s}', id))
    status <- "ok"
    problem <- NULL
    exprs <- tryCatch(
      parse(text = code, keep.source = FALSE, srcfile = NULL),
      error = function(e) e
    )
    if (inherits(exprs, "error")) {
      message <- conditionMessage(exprs)
      cat("Error: ", message, "\n", sep = "", file = stderr())
      status <- "error"
      problem <- paste0("SyntaxError: ", message)
    } else {
      outcome <- tryCatch(
        withCallingHandlers({
          for (expr in exprs) {
            result <- withVisible(eval(expr, envir = globalenv()))
            if (result$visible) print(result$value)
          }
          "ok"
        }, warning = function(w) {
          cat("Warning: ", conditionMessage(w), "\n", sep = "", file = stderr())
          invokeRestart("muffleWarning")
        }),
        interrupt = function(i) {
          cat("Interrupted\n", file = stderr())
          "interrupted"
        },
        error = function(e) {
          call <- conditionCall(e)
          where <- if (is.null(call)) "" else paste0(" in ", paste(deparse(call), collapse = " "))
          cat("Error", where, ": ", conditionMessage(e), "\n", sep = "", file = stderr())
          structure(conditionMessage(e), class = "oi_error")
        }
      )
      if (inherits(outcome, "oi_error")) {
        status <- "error"
        problem <- paste0("Error: ", as.character(outcome))
      } else if (identical(outcome, "interrupted")) {
        status <- "interrupted"
      }
    }
    flush(stdout())
    flush(stderr())
    marker <- charToRaw(paste0("\033]oi;", token, ";", id, "\007"))
    writeBin(marker, out)
    flush(out)
    writeBin(marker, err)
    flush(err)
    error_field <- if (is.null(problem)) "" else paste0(',"error":', json_string(problem))
    send(sprintf('{"type":"done","id":%s,"status":"%s"%s}', id, status, error_field))
  }
})
