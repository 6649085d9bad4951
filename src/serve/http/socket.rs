//! The connection's raw socket, beside hyper: set to reset on close (a fault), and asked
//! whether the client closed its side while its request waits for its answer (a
//! hang-up: hyper, answering half-closed clients, does not read the socket meanwhile).

/// The raw socket of a connection the connection's task still holds open.
#[derive(Clone, Copy)]
pub(super) struct Socket {
    #[cfg(unix)]
    fd: std::os::fd::RawFd,
}

impl Socket {
    pub(super) fn of(stream: &tokio::net::TcpStream) -> Socket {
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            Socket {
                fd: stream.as_raw_fd(),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = stream;
            Socket {}
        }
    }

    /// Closing the socket now sends a reset (the connection still owns it, open).
    pub(super) fn reset_on_close(&self) {
        #[cfg(unix)]
        {
            let linger = libc::linger {
                l_onoff: 1,
                l_linger: 0,
            };
            // SAFETY: `fd` is the open socket of the connection, which is dropped only
            // after this call; the option value is a valid `linger` of the size passed.
            unsafe {
                libc::setsockopt(
                    self.fd,
                    libc::SOL_SOCKET,
                    libc::SO_LINGER,
                    (&linger as *const libc::linger).cast(),
                    std::mem::size_of::<libc::linger>() as libc::socklen_t,
                );
            }
        }
    }

    /// Whether the client has closed its side (its FIN read as end of stream) or reset
    /// the connection, with nothing unread before it: a peek, which takes nothing from
    /// the socket, so hyper reads what was sent (a pipelined request) as before.
    pub(super) fn peer_closed(&self) -> bool {
        #[cfg(unix)]
        {
            let mut byte = 0u8;
            // SAFETY: `fd` is the open socket of the connection, which outlives the
            // request being answered; the buffer is one valid byte.
            let n = unsafe {
                libc::recv(
                    self.fd,
                    (&mut byte as *mut u8).cast(),
                    1,
                    libc::MSG_PEEK | libc::MSG_DONTWAIT,
                )
            };
            let would_block = || {
                matches!(
                    std::io::Error::last_os_error().kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::Interrupted
                )
            };
            n == 0 || (n < 0 && !would_block())
        }
        #[cfg(not(unix))]
        {
            false
        }
    }
}
