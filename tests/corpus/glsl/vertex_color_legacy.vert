// No #version: GLSL 1.10 with a per-vertex colour and a light term.
attribute vec3 position;
attribute vec3 normal;
attribute vec4 color;
uniform mat4 mvp;
uniform vec3 light_dir;
varying vec4 v_color;
void main() {
    float d = max(dot(normal, light_dir), 0.0);
    v_color = vec4(color.rgb * (0.2 + 0.8 * d), color.a);
    gl_Position = mvp * vec4(position, 1.0);
}
