#version 450
// Sky dome: view direction out, sun direction constant across the draw.
layout(location = 0) in vec3 a_dir;
layout(binding = 0) uniform Sky { mat4 view_proj; vec3 sun; } s;
out vec3 v_dir;
out vec3 v_sun;
void main() {
    v_dir = a_dir;
    v_sun = normalize(s.sun);
    gl_Position = (s.view_proj * vec4(a_dir, 0.0)).xyww;
}
