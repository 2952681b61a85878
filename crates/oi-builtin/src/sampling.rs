//! How the next token is picked.

/// Sampling settings. The defaults suit small coding models writing code:
/// a low temperature with a light repetition penalty (a 0.5B model at
/// temperature 0 falls into loops; a high one writes broken code).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// 0 picks the likeliest token every time.
    pub temperature: f32,
    pub top_k: i32,
    pub top_p: f32,
    /// Above 1, tokens used among the last `repeat_last_n` are less likely.
    pub repeat_penalty: f32,
    pub repeat_last_n: i32,
    pub seed: u32,
}

impl Default for Sampling {
    fn default() -> Self {
        Self {
            temperature: 0.2,
            top_k: 40,
            top_p: 0.9,
            repeat_penalty: 1.1,
            repeat_last_n: 64,
            seed: 0x5eed,
        }
    }
}

impl Sampling {
    /// These settings with the request's temperature, when it sets one.
    pub fn with_temperature(mut self, temperature: Option<f64>) -> Self {
        if let Some(t) = temperature {
            self.temperature = t as f32;
        }
        self
    }
}
