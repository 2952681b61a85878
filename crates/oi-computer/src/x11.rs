//! The X11 backend: GetImage for screenshots, XTEST for mouse and keyboard.

use std::time::Duration;

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::xproto::{self, ConnectionExt as _, ImageFormat, Keycode, Window};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use crate::keys::Keysym;
use crate::{Button, Computer, ComputerError, Frame, Size};

/// A connection to an X display.
pub struct X11 {
    conn: RustConnection,
    root: Window,
    size: Size,
    display: String,
    min_keycode: Keycode,
    max_keycode: Keycode,
    /// Keysyms per keycode, and the map (`per` entries for each keycode
    /// from `min_keycode`).
    per: usize,
    map: Vec<Keysym>,
    /// A keycode with no keysyms, borrowed to type characters the keyboard
    /// map lacks.
    spare: Option<Keycode>,
}

impl std::fmt::Debug for X11 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("X11")
            .field("display", &self.display)
            .field("size", &self.size)
            .finish()
    }
}

fn protocol(error: impl std::fmt::Display) -> ComputerError {
    ComputerError::Protocol(error.to_string())
}

impl X11 {
    /// Connects to `display` (e.g. `:0`).
    pub fn connect(display: &str) -> Result<Self, ComputerError> {
        let (conn, screen) = x11rb::connect(Some(display)).map_err(|e| ComputerError::Connect {
            display: display.to_owned(),
            detail: e.to_string(),
        })?;
        let missing = || ComputerError::MissingExtension {
            display: display.to_owned(),
            extension: "XTEST",
        };
        if conn
            .extension_information(x11rb::protocol::xtest::X11_EXTENSION_NAME)
            .map_err(protocol)?
            .is_none()
        {
            return Err(missing());
        }
        let setup = conn.setup();
        let Some(root_screen) = setup.roots.get(screen) else {
            return Err(ComputerError::Connect {
                display: display.to_owned(),
                detail: format!("the display has no screen {screen}"),
            });
        };
        let depth = root_screen.root_depth;
        let bits_per_pixel = setup
            .pixmap_formats
            .iter()
            .find(|f| f.depth == depth)
            .map_or(0, |f| f.bits_per_pixel);
        if bits_per_pixel != 32 || setup.image_byte_order != xproto::ImageOrder::LSB_FIRST {
            return Err(ComputerError::Connect {
                display: display.to_owned(),
                detail: format!(
                    "its screen has {bits_per_pixel} bits per pixel (depth {depth}); screenshots need a 24- or 32-bit colour screen"
                ),
            });
        }
        let size = Size {
            width: u32::from(root_screen.width_in_pixels),
            height: u32::from(root_screen.height_in_pixels),
        };
        let root = root_screen.root;
        let (min_keycode, max_keycode) = (setup.min_keycode, setup.max_keycode);
        let mut this = Self {
            conn,
            root,
            size,
            display: display.to_owned(),
            min_keycode,
            max_keycode,
            per: 0,
            map: Vec::new(),
            spare: None,
        };
        this.read_keymap()?;
        Ok(this)
    }

    fn read_keymap(&mut self) -> Result<(), ComputerError> {
        let count = self.max_keycode - self.min_keycode + 1;
        let reply = self
            .conn
            .get_keyboard_mapping(self.min_keycode, count)
            .map_err(protocol)?
            .reply()
            .map_err(protocol)?;
        self.per = usize::from(reply.keysyms_per_keycode).max(1);
        self.map = reply.keysyms;
        self.spare = (0..usize::from(count))
            .rev()
            .find(|i| {
                self.map[i * self.per..(i + 1) * self.per]
                    .iter()
                    .all(|&s| s == 0)
            })
            .and_then(|i| u8::try_from(i).ok())
            .map(|i| self.min_keycode + i);
        Ok(())
    }

    /// The keycode that makes `keysym`, and whether Shift is needed.
    fn find(&self, keysym: Keysym) -> Option<(Keycode, bool)> {
        for column in 0..self.per.min(2) {
            for (i, syms) in self.map.chunks(self.per).enumerate() {
                if syms.get(column) == Some(&keysym) {
                    let code = self.min_keycode + u8::try_from(i).ok()?;
                    return Some((code, column == 1));
                }
            }
        }
        None
    }

    fn fake(&self, kind: u8, detail: u8, x: i16, y: i16) -> Result<(), ComputerError> {
        self.conn
            .xtest_fake_input(kind, detail, 0, self.root, x, y, 0)
            .map_err(protocol)?;
        Ok(())
    }

    /// Makes `code` type `keysym` (0: nothing), and gives clients the time
    /// to reread the map (on MappingNotify) before a key event arrives.
    fn bind(&self, code: Keycode, keysym: Keysym) -> Result<(), ComputerError> {
        let syms = vec![keysym; self.per];
        self.conn
            .change_keyboard_mapping(1, code, u8::try_from(self.per).unwrap_or(1), &syms)
            .map_err(protocol)?;
        self.sync()?;
        std::thread::sleep(Duration::from_millis(20));
        Ok(())
    }

    fn sync(&self) -> Result<(), ComputerError> {
        self.conn
            .get_input_focus()
            .map_err(protocol)?
            .reply()
            .map_err(protocol)?;
        Ok(())
    }
}

const SHIFT_L: Keysym = 0xffe1;

impl Computer for X11 {
    fn name(&self) -> String {
        format!("X11 display {}", self.display)
    }

    fn screen_size(&self) -> Size {
        self.size
    }

    fn capture(&mut self) -> Result<Frame, ComputerError> {
        let width = u16::try_from(self.size.width).map_err(protocol)?;
        let height = u16::try_from(self.size.height).map_err(protocol)?;
        let reply = self
            .conn
            .get_image(ImageFormat::Z_PIXMAP, self.root, 0, 0, width, height, !0)
            .map_err(protocol)?
            .reply()
            .map_err(protocol)?;
        Ok(Frame {
            size: self.size,
            bgrx: reply.data,
        })
    }

    fn pointer(&mut self) -> Result<(u32, u32), ComputerError> {
        let reply = self
            .conn
            .query_pointer(self.root)
            .map_err(protocol)?
            .reply()
            .map_err(protocol)?;
        Ok((
            u32::try_from(reply.root_x.max(0)).unwrap_or(0),
            u32::try_from(reply.root_y.max(0)).unwrap_or(0),
        ))
    }

    fn move_pointer(&mut self, x: u32, y: u32) -> Result<(), ComputerError> {
        let x = i16::try_from(x).map_err(protocol)?;
        let y = i16::try_from(y).map_err(protocol)?;
        self.fake(xproto::MOTION_NOTIFY_EVENT, 0, x, y)?;
        self.sync()
    }

    fn button(&mut self, button: Button, press: bool) -> Result<(), ComputerError> {
        let kind = if press {
            xproto::BUTTON_PRESS_EVENT
        } else {
            xproto::BUTTON_RELEASE_EVENT
        };
        self.fake(kind, button.x11_number(), 0, 0)?;
        self.sync()
    }

    fn key(&mut self, keysym: Keysym, press: bool) -> Result<(), ComputerError> {
        let kind = if press {
            xproto::KEY_PRESS_EVENT
        } else {
            xproto::KEY_RELEASE_EVENT
        };
        if let Some((code, _)) = self.find(keysym) {
            self.fake(kind, code, 0, 0)?;
            return self.sync();
        }
        // Not on the keyboard: bound to a spare keycode for the press.
        let Some(spare) = self.spare else {
            return Err(ComputerError::Protocol(format!(
                "the keyboard map has no key for keysym {keysym:#x} and no spare key to borrow"
            )));
        };
        if press {
            self.bind(spare, keysym)?;
            self.fake(kind, spare, 0, 0)?;
        } else {
            self.fake(kind, spare, 0, 0)?;
            self.sync()?;
            // A client translates a key event with the map it reads when
            // it gets to the event: given back at once, a busy client reads
            // the map without the borrowed key and sees nothing typed.
            std::thread::sleep(Duration::from_millis(150));
            self.bind(spare, 0)?;
        }
        self.sync()
    }

    fn type_char(&mut self, c: char) -> Result<(), ComputerError> {
        let keysym = crate::keys::char_keysym(c);
        match self.find(keysym) {
            Some((code, shift)) => {
                if shift {
                    self.key(SHIFT_L, true)?;
                }
                self.fake(xproto::KEY_PRESS_EVENT, code, 0, 0)?;
                self.fake(xproto::KEY_RELEASE_EVENT, code, 0, 0)?;
                if shift {
                    self.key(SHIFT_L, false)?;
                }
                self.sync()
            }
            None => {
                self.key(keysym, true)?;
                self.key(keysym, false)
            }
        }
    }
}
